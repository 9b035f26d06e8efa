"""``memkeeper serve``: the live dashboard (extra ``memkeeper[serve]``; nothing else imports
it). ``app`` is the Starlette app, ``stream`` the event poller behind ``/api/stream``,
``serve`` binds the socket and runs uvicorn, ``static/`` the page (no build step, no CDN)."""
