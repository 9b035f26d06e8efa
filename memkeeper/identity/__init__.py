"""Who is acting, proven: the agent session a process runs in (``sessions``), the keys that
sign every event (``keys``) and the repository's tracked list of trusted signers
(``signers``). Pure: the files behind them are read and written by ``fs.keyring`` and
``ops.keys``."""
