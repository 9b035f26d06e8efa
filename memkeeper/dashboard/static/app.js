// memkeeper dashboard: plain ES2020, no framework, no build step.
// SECURITY: everything that comes from the server (ids, agents, objectives, targets, event
// data, section text, diffs) is written with textContent / createTextNode / setAttribute —
// never innerHTML — so an agent's text can never become markup on this page.
"use strict";

(() => {
  const MAX_EVENTS = 500; // rows kept in the DOM (and in memory)
  const POLL_MS = 10000; // the slow fallback refresh
  const TICK_MS = 250; // countdowns re-render when their text changes
  const TOKEN = takeToken();

  // The access token: from the URL memkeeper serve printed (…/?token=T) on the first load,
  // then from this tab's sessionStorage — which is per origin, port included — so a reload
  // keeps it and no other server on this host ever sees it (a cookie would go to them all).
  // The token leaves the address bar (and the history) at once.
  function takeToken() {
    const KEY = "memkeeper-token";
    const params = new URLSearchParams(window.location.search);
    const given = params.get("token");
    if (given) {
      try {
        window.sessionStorage.setItem(KEY, given);
      } catch (_) {
        // storage refused (a private window's quota): the token lives as long as the page
      }
      params.delete("token");
      const rest = params.toString();
      const url = window.location.pathname + (rest ? `?${rest}` : "") + window.location.hash;
      window.history.replaceState(null, "", url);
      return given;
    }
    try {
      return window.sessionStorage.getItem(KEY) || "";
    } catch (_) {
      return "";
    }
  }

  const $ = (id) => document.getElementById(id);

  // ---- DOM building (text only) -------------------------------------------------------

  /** el("td", {class: "x", title: t}, child, "text", …): attributes via setAttribute,
   * strings as text nodes. */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function emptyRow(columns, text) {
    return el("tr", { class: "empty" }, el("td", { colspan: columns }, text));
  }

  function orDash(value) {
    return value === null || value === undefined || value === "" ? "—" : String(value);
  }

  function targetsList(targets) {
    const list = el("ul", { class: "targets" });
    for (const target of targets || []) list.append(el("li", null, el("code", null, target)));
    return list;
  }

  function badge(kind, text) {
    return el("span", { class: `badge badge-${kind}` }, text);
  }

  function category(type) {
    const head = String(type || "").split(".")[0];
    const known = ["claim", "section", "entry", "region", "reconcile", "proposal", "policy"];
    return known.includes(head) ? head : "other";
  }

  /** Keep `container`'s children in step with `items` by key: unchanged items keep their
   * node (and so the focus and any half-done click), changed ones are rebuilt in place. */
  const signatures = new WeakMap();
  function keyed(container, items, keyOf, render, empty) {
    const existing = new Map();
    for (const child of Array.from(container.children)) {
      if (child.dataset.key === undefined) child.remove();
      else existing.set(child.dataset.key, child);
    }
    const wanted = items.map((item) => {
      const key = keyOf(item);
      const signature = JSON.stringify(item);
      const old = existing.get(key);
      existing.delete(key);
      if (old && signatures.get(old) === signature) return old;
      const fresh = render(item);
      fresh.dataset.key = key;
      signatures.set(fresh, signature);
      if (old) replaceKeepingFocus(old, fresh);
      return fresh;
    });
    for (const gone of existing.values()) gone.remove();
    wanted.forEach((node, i) => {
      if (container.children[i] !== node) container.insertBefore(node, container.children[i] || null);
    });
    if (!items.length && empty) container.append(empty());
  }

  function replaceKeepingFocus(old, fresh) {
    const active = document.activeElement;
    const focusKey = active && old.contains(active) ? active.dataset.focus : undefined;
    old.replaceWith(fresh);
    if (focusKey === undefined) return;
    for (const candidate of fresh.querySelectorAll("[data-focus]")) {
      if (candidate.dataset.focus === focusKey) {
        candidate.focus();
        return;
      }
    }
  }

  // ---- time: the server's clock, corrected for skew ------------------------------------

  const clock = { skew: 0 }; // server time minus browser time, in ms

  function serverNow() {
    return Date.now() + clock.skew;
  }

  function noteServerTime(iso, sentAt, receivedAt) {
    const server = Date.parse(iso);
    if (!Number.isNaN(server)) clock.skew = server - (sentAt + receivedAt) / 2;
  }

  const pad = (n) => String(n).padStart(2, "0");

  function fmtTime(iso) {
    const ms = Date.parse(iso);
    if (Number.isNaN(ms)) return orDash(iso);
    const d = new Date(ms);
    const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
    const today = new Date();
    if (d.toDateString() === today.toDateString()) return time;
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${time}`;
  }

  function fmtLeft(ms) {
    const s = Math.max(0, Math.ceil(ms / 1000));
    if (s < 60) return `${s} s`;
    const m = Math.floor(s / 60);
    if (m < 60) return `${m} m ${pad(s % 60)} s`;
    return `${Math.floor(m / 60)} h ${pad(m % 60)} m`;
  }

  function fmtSeconds(seconds) {
    if (seconds === null || seconds === undefined) return "—";
    const s = Number(seconds);
    if (!Number.isFinite(s)) return "—";
    if (s < 10) return `${s.toFixed(1)} s`;
    return fmtLeft(s * 1000);
  }

  function fmtAgo(iso) {
    const ms = Date.parse(iso);
    if (Number.isNaN(ms)) return orDash(iso);
    const s = Math.round((serverNow() - ms) / 1000);
    if (s < 5) return "just now";
    if (s < 60) return `${s} s ago`;
    if (s < 3600) return `${Math.floor(s / 60)} min ago`;
    if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
    return fmtTime(iso);
  }

  function fmtWindow(seconds) {
    const s = Number(seconds);
    if (!Number.isFinite(s) || s <= 0) return "the whole log";
    if (s % 86400 === 0) return s === 86400 ? "24 h" : `${s / 86400} days`;
    if (s % 3600 === 0) return `${s / 3600} h`;
    if (s % 60 === 0) return `${s / 60} min`;
    return `${s} s`;
  }

  /** A <time> that says "12 s ago" and keeps saying the truth (see tick). */
  function ago(iso) {
    return el("time", { class: "ago", datetime: iso, title: iso }, fmtAgo(iso));
  }

  /** A countdown to `deadline` (ms) on the server's clock ("server") or the browser's. */
  function countdown(deadline, on, expiresIso) {
    const node = el("span", { class: "countdown", title: expiresIso ? `until ${fmtTime(expiresIso)}` : null });
    node.dataset.deadline = String(deadline);
    node.dataset.clock = on;
    renderCountdown(node);
    return node;
  }

  const expiredSeen = new Set();

  function renderCountdown(node) {
    const now = node.dataset.clock === "server" ? serverNow() : Date.now();
    const left = Number(node.dataset.deadline) - now;
    const text = left > 0 ? fmtLeft(left) : "expired";
    if (node.textContent !== text) node.textContent = text;
    node.classList.toggle("soon", left > 0 && left < 15000);
    node.classList.toggle("over", left <= 0);
    if (left <= 0 && node.dataset.claim && !expiredSeen.has(node.dataset.claim)) {
      expiredSeen.add(node.dataset.claim);
      soon(loadClaims, 1500); // the server sweeps it: fetch the list without it
    }
  }

  let lastAgoRefresh = 0;
  function tick() {
    for (const node of document.querySelectorAll(".countdown")) renderCountdown(node);
    if (Date.now() - lastAgoRefresh >= 1000) {
      lastAgoRefresh = Date.now();
      for (const node of document.querySelectorAll("time.ago")) {
        const text = fmtAgo(node.getAttribute("datetime"));
        if (node.textContent !== text) node.textContent = text;
      }
    }
  }

  // ---- talking to the server -----------------------------------------------------------

  class ApiError extends Error {
    constructor(code, status, message) {
      super(message);
      this.code = code;
      this.status = status;
    }
  }

  async function api(path, init) {
    const options = Object.assign({ credentials: "omit", cache: "no-store" }, init || {});
    options.headers = Object.assign(
      { Accept: "application/json", Authorization: `Bearer ${TOKEN}` },
      (init && init.headers) || {},
    );
    const response = await fetch(path, options);
    let body = null;
    try {
      body = await response.json();
    } catch (_) {
      body = null;
    }
    if (response.status === 401) setUnauthorized();
    if (!response.ok || !body || body.status !== "ok") {
      const message = (body && body.message) || `${response.status} ${response.statusText}`;
      throw new ApiError(response.status, (body && body.status) || "error", message);
    }
    return body;
  }

  function post(path, payload) {
    return api(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(payload),
    });
  }

  const problems = new Map(); // what failed to load → its message

  function noteProblem(what, err) {
    if (err) problems.set(what, `${what}: ${err.message || err}`);
    else problems.delete(what);
    const banner = $("banner");
    const text = Array.from(problems.values()).join(" · ");
    banner.hidden = !text;
    if (banner.textContent !== text) banner.textContent = text;
  }

  /** One loader per resource: calls while one runs make it run once more, never twice at
   * once; a failure shows in the banner until the next success. */
  function loader(what, fn) {
    let running = null;
    let again = false;
    return function run() {
      if (running) {
        again = true;
        return running;
      }
      running = (async () => {
        try {
          do {
            again = false;
            await fn();
          } while (again);
          noteProblem(what, null);
        } catch (err) {
          noteProblem(what, err);
        } finally {
          running = null;
        }
      })();
      return running;
    };
  }

  const timers = new Map();
  function soon(load, ms) {
    if (timers.has(load)) return;
    timers.set(load, setTimeout(() => {
      timers.delete(load);
      load();
    }, ms));
  }

  // ---- connection state ----------------------------------------------------------------

  let unauthorized = false;

  function setConn(state, text) {
    if (unauthorized && state !== "unauthorized") return;
    const box = $("conn");
    box.dataset.state = state;
    const label = text || state;
    if ($("conn-text").textContent !== label) $("conn-text").textContent = label;
  }

  function setUnauthorized() {
    setConn("unauthorized", "not signed in — open the URL that memkeeper serve printed");
    unauthorized = true;
  }

  // ---- header: /api/status -------------------------------------------------------------

  const loadStatus = loader("status", async () => {
    const status = await api("/api/status");
    const files = status.files || [];
    const parts = [];
    if (status.policy) parts.push(`policy ${status.policy}`);
    parts.push(`${files.length} managed file${files.length === 1 ? "" : "s"}`);
    $("policy").textContent = parts.join(" · ");
    if (status.root && $("root").textContent !== status.root) {
      $("root").textContent = status.root;
      document.title = `memkeeper — ${status.root}`;
    }
  });

  // ---- claims and waiters --------------------------------------------------------------

  const loadClaims = loader("claims", async () => {
    const sentAt = Date.now();
    const data = await api("/api/claims");
    const receivedAt = Date.now();
    if (data.now) noteServerTime(data.now, sentAt, receivedAt);
    renderClaims(data.claims || []);
    renderWaiters(data.waiters || [], (sentAt + receivedAt) / 2);
    const records = await api("/api/claim-records");
    renderRecords(records.records || [], records.by_state || {});
    const talks = await api("/api/meetings");
    renderMeetings(talks.meetings || []);
    renderReleases(talks.release_requests || []);
  });

  function renderRecords(records, byState) {
    const states = Object.entries(byState).map(([state, n]) => `${state} ${n}`);
    $("records-states").textContent = states.length ? `(${states.join(" · ")})` : "";
    const body = $("records-body");
    body.replaceChildren(...(records.length ? records.map(recordRow) : [emptyRow(6, "No claims yet.")]));
  }

  function evidenceCell(record) {
    const proof = record.evidence;
    if (!proof) return record.predecessor ? `takes over ${record.predecessor}` : "—";
    const found = proof.verified || {};
    const checks = found.checks || [];
    const failed = checks.filter((c) => !c.passed).length;
    const parts = [];
    if (found.head) parts.push(`head ${String(found.head).slice(0, 10)}`);
    parts.push(`${Number(found.changed_count || 0)} file(s) changed`);
    parts.push(`${(found.memory || []).length} memory rev(s)`);
    if (checks.length) parts.push(`${checks.length - failed}/${checks.length} checks passed`);
    const cell = el("span", { class: "evidence" }, parts.join(" · "));
    if (proof.reported) cell.append(" ", badge("advisory", "self-reported"));
    if (record.reason) cell.append(el("span", { class: "muted" }, ` — ${record.reason}`));
    return cell;
  }

  function recordRow(record) {
    return el(
      "tr",
      { "data-record": record.id, "data-state": record.state },
      el("td", null, badge(record.state === "active" ? "write" : "read", orDash(record.state))),
      el("td", null, el("span", { class: "agent" }, orDash(record.agent)), " ",
        el("span", { class: "muted id" }, orDash(record.id))),
      el("td", null, targetsList(record.targets)),
      el("td", { class: "num" }, orDash(record.rev)),
      el("td", { class: "objective" }, orDash(record.objective)),
      el("td", null, evidenceCell(record)),
    );
  }

  function renderMeetings(meetings) {
    const rows = meetings.slice().sort((a, b) => Date.parse(a.deadline) - Date.parse(b.deadline));
    const none = [emptyRow(6, "No open meetings.")];
    $("meetings-body").replaceChildren(...(rows.length ? rows.map(meetingRow) : none));
  }

  function meetingRow(m) {
    const people = el("ul", { class: "targets" });
    for (const p of m.participants || []) people.append(el("li", null, el("span", { class: "agent" }, p)));
    const offers = (m.proposals || []).map((o) => `${o.n}: ${o.kind} by ${o.by} (${(o.accepted_by || []).length} accepted)`);
    const open = m.state === "open";
    const turn = m.state === "serializing" ? ` → ${m.order[m.turn]}, then ${m.order.slice(m.turn + 1).join(", ")}` : "";
    const state = open ? badge("advisory", "open") : badge("strict", `${m.state}${turn}${(m.owners || []).length ? " → " + m.owners.join(", ") : ""}`);
    return el(
      "tr",
      { "data-meeting": m.id },
      el("td", null, `#${m.id}`, " ", el("span", { class: "muted id" }, `rev ${m.rev}`)),
      el("td", null, people),
      el("td", null, targetsList(m.targets)),
      el("td", null, state),
      el("td", null, offers.length ? offers.join("; ") : "—"),
      el("td", { class: "num" }, open ? countdown(Date.parse(m.deadline), "server", m.deadline) : fmtTime(m.deadline)),
    );
  }

  function renderReleases(requests) {
    const none = [emptyRow(5, "No release requests today.")];
    $("releases-body").replaceChildren(...(requests.length ? requests.map(releaseRow) : none));
  }

  function releaseRow(r) {
    const a = r.answer;
    let said = "waiting for an answer";
    if (a && a.released) said = `released (${fmtTime(a.at)})`;
    else if (a) said = `keeps it: ${a.reason}${a.eta_s != null ? ` — ETA ${fmtSeconds(a.eta_s)}` : ""}`;
    return el(
      "tr",
      { "data-release": r.id },
      el("td", null, el("span", { class: "agent" }, orDash(r.from))),
      el("td", null, el("span", { class: "agent" }, orDash(r.to))),
      el("td", null, el("span", { class: "muted id" }, orDash(r.claim))),
      el("td", null, fmtTime(r.sent_at), " ", el("span", { class: "muted" }, r.text || "")),
      el("td", null, said),
    );
  }

  function claimDeadline(claim) {
    const expires = Date.parse(claim.expires_at);
    if (!Number.isNaN(expires)) return expires;
    return serverNow() + Number(claim.seconds_left || 0) * 1000;
  }

  function renderClaims(claims) {
    const body = $("claims-body");
    const rows = claims.slice().sort((a, b) => claimDeadline(a) - claimDeadline(b));
    body.replaceChildren(...(rows.length ? rows.map(claimRow) : [emptyRow(7, "No live claims.")]));
    $("count-claims").textContent = `(${rows.length})`;
  }

  function claimRow(claim) {
    const left = countdown(claimDeadline(claim), "server", claim.expires_at);
    left.dataset.claim = String(claim.id);
    const strict = claim.strict === true;
    return el(
      "tr",
      { "data-claim": claim.id },
      el("td", null, el("span", { class: "agent" }, orDash(claim.agent)), " ",
        el("span", { class: "muted id" }, orDash(claim.id)),
        claim.idle ? " " : null, claim.idle ? idleBadge(claim.idle) : null),
      el("td", null, targetsList(claim.targets)),
      el("td", null, badge(claim.mode === "read" ? "read" : "write", orDash(claim.mode))),
      el("td", null, badge(strict ? "strict" : "advisory", strict ? "strict" : "advisory")),
      el("td", { class: "num" }, el("code", { class: "token" }, orDash(claim.token))),
      el("td", { class: "objective" }, orDash(claim.objective)),
      el("td", { class: "num" }, left),
    );
  }

  // The watchdog's mark (memkeeper watch): nothing moved under the claim for a while.
  function idleBadge(idle) {
    const mark = badge("idle", "idle");
    mark.title = `no movement on the ground since before ${idle.since} — its holder was told`;
    return mark;
  }

  function renderWaiters(waiters, fetchedAt) {
    const body = $("waiters-body");
    const rows = waiters.slice().sort((a, b) => Number(a.position) - Number(b.position));
    const build = (w) => waiterRow(w, fetchedAt);
    body.replaceChildren(...(rows.length ? rows.map(build) : [emptyRow(7, "Nobody is waiting.")]));
  }

  function waiterRow(waiter, fetchedAt) {
    const blockers = el("ul", { class: "targets" });
    for (const b of waiter.blocked_by || []) {
      blockers.append(el("li", null, el("span", { class: "agent" }, orDash(b.agent)), " ",
        el("span", { class: "muted id" }, orDash(b.id))));
    }
    const deadline = fetchedAt + Number(waiter.seconds_left || 0) * 1000;
    const position = Number(waiter.position) === 1 ? "1 · next" : orDash(waiter.position);
    return el(
      "tr",
      { "data-waiter": waiter.id },
      el("td", { class: "num" }, position),
      el("td", null, el("span", { class: "agent" }, orDash(waiter.agent)), " ",
        el("span", { class: "muted id" }, orDash(waiter.id))),
      el("td", null, targetsList(waiter.targets)),
      el("td", null, badge(waiter.mode === "read" ? "read" : "write", orDash(waiter.mode))),
      el("td", { class: "num" }, orDash(waiter.priority)),
      el("td", null, (waiter.blocked_by || []).length ? blockers : "—"),
      el("td", { class: "num" }, countdown(deadline, "local")),
    );
  }

  // ---- events --------------------------------------------------------------------------

  const events = new Map(); // id → event, at most MAX_EVENTS
  const seenTypes = new Set();
  let maxEventId = 0;

  function eventTarget(event) {
    if (!event.path) return "";
    return event.section ? `${event.path}#${event.section}` : String(event.path);
  }

  function summarize(data) {
    if (data === null || data === undefined) return "";
    if (typeof data !== "object") return String(data);
    const parts = [];
    for (const [key, value] of Object.entries(data)) {
      let text = typeof value === "string" ? value : JSON.stringify(value);
      if (text && text.length > 80) text = `${text.slice(0, 79)}…`;
      parts.push(`${key}=${text}`);
    }
    const all = parts.join("  ");
    return all.length > 240 ? `${all.slice(0, 239)}…` : all;
  }

  /** A mark beside the actor when the signers file does not vouch for the event (verify names it too). */
  function signatureMark(event) {
    const problem = event.signature_problem;
    if (typeof problem !== "string" || !problem) return "";
    return el("span", { class: "unverified", title: `not attested: ${problem}` }, "unverified");
  }

  function eventRow(event, fresh) {
    const target = eventTarget(event);
    let full = "";
    try {
      full = JSON.stringify(event.data, null, 1) || "";
    } catch (_) {
      full = "";
    }
    const row = el(
      "tr",
      { class: `ev ev-${category(event.type)}${fresh ? " fresh" : ""}` },
      el("td", { class: "num muted" }, String(event.id)),
      el("td", { class: "nowrap" }, el("time", { datetime: event.ts, title: event.ts }, fmtTime(event.ts))),
      el("td", null, el("span", { class: "agent" }, orDash(event.actor)), signatureMark(event)),
      el("td", null, el("span", { class: `type type-${category(event.type)}` }, orDash(event.type))),
      el("td", null, target ? el("code", null, target) : "—"),
      el("td", { class: "details", title: full.length > 2000 ? `${full.slice(0, 2000)}…` : full },
        el("div", { class: "clamp" }, summarize(event.data))),
    );
    row.dataset.id = String(event.id);
    row.dataset.type = String(event.type || "");
    row.dataset.actor = String(event.actor || "").toLowerCase();
    row.dataset.target = target.toLowerCase();
    // once: un-hiding a filtered row must not replay its arrival highlight
    if (fresh) row.addEventListener("animationend", () => row.classList.remove("fresh"), { once: true });
    return row;
  }

  /** Insert events (any order, duplicates ignored) newest first; keep the newest 500. */
  function addEvents(list, fresh) {
    const body = $("events-body");
    const placeholder = body.querySelector("tr.empty");
    let typesChanged = false;
    for (const event of list) {
      if (!event || typeof event.id !== "number" || events.has(event.id)) continue;
      if (events.size >= MAX_EVENTS && event.id < minEventId()) continue;
      events.set(event.id, event);
      maxEventId = Math.max(maxEventId, event.id);
      if (event.type && !seenTypes.has(event.type)) {
        seenTypes.add(event.type);
        typesChanged = true;
      }
      const row = eventRow(event, fresh);
      applyFilter(row);
      let before = body.firstElementChild;
      while (before && Number(before.dataset.id) > event.id) before = before.nextElementSibling;
      body.insertBefore(row, before);
    }
    while (events.size > MAX_EVENTS) {
      const last = body.lastElementChild;
      events.delete(Number(last.dataset.id));
      last.remove();
    }
    if (placeholder && events.size) placeholder.remove();
    if (!events.size && !body.querySelector("tr.empty")) body.append(emptyRow(6, "No events yet."));
    if (typesChanged) renderTypeOptions();
    renderShown();
  }

  function minEventId() {
    let min = Infinity;
    for (const id of events.keys()) if (id < min) min = id;
    return min;
  }

  function renderTypeOptions() {
    const select = $("filter-type");
    const chosen = select.value;
    const options = [el("option", { value: "" }, "All types")];
    for (const type of Array.from(seenTypes).sort()) options.push(el("option", { value: type }, type));
    select.replaceChildren(...options);
    select.value = chosen;
  }

  function filters() {
    return {
      type: $("filter-type").value,
      agent: $("filter-agent").value.trim().toLowerCase(),
      path: $("filter-path").value.trim().toLowerCase(),
    };
  }

  function applyFilter(row, f) {
    const want = f || filters();
    row.hidden = Boolean(
      (want.type && row.dataset.type !== want.type) ||
        (want.agent && !row.dataset.actor.includes(want.agent)) ||
        (want.path && !row.dataset.target.includes(want.path)),
    );
  }

  function applyFilters() {
    const f = filters();
    for (const row of $("events-body").querySelectorAll("tr.ev")) applyFilter(row, f);
    renderShown();
  }

  function renderShown() {
    const rows = $("events-body").querySelectorAll("tr.ev");
    let shown = 0;
    for (const row of rows) if (!row.hidden) shown += 1;
    const text = shown === rows.length ? `${rows.length} events` : `showing ${shown} of ${rows.length} events`;
    if ($("events-shown").textContent !== text) $("events-shown").textContent = text;
    $("count-events").textContent = `(${rows.length})`;
  }

  async function eventsAfter(since, limit) {
    const page = await api(`/api/events?since=${since}&limit=${limit}`);
    return page.events || [];
  }

  /** The id of the newest event, knowing one that exists: ids are 1, 2, 3…, so "is there
   * one after k" answers a doubling search and then a bisection, one tiny request each. */
  async function lastEventId(known) {
    let lo = known;
    let step = Math.max(known, 1);
    let hi = lo + step;
    while ((await eventsAfter(hi, 1)).length) {
      lo = hi + 1;
      step *= 2;
      hi = lo + step;
    }
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if ((await eventsAfter(mid, 1)).length) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  const loadRecentEvents = loader("events", async () => {
    let page = await eventsAfter(0, MAX_EVENTS);
    if (page.length >= MAX_EVENTS) {
      const last = await lastEventId(page[page.length - 1].id);
      page = await eventsAfter(Math.max(0, last - MAX_EVENTS), MAX_EVENTS);
    }
    addEvents(page, false);
  });

  const catchUp = loader("events", async () => {
    for (let pages = 0; pages < 20; pages += 1) {
      const page = await eventsAfter(maxEventId, MAX_EVENTS);
      addEvents(page, true);
      page.forEach(react);
      if (page.length < MAX_EVENTS) return;
    }
  });

  /** What an event changes, refetched soon (bursts coalesce). */
  function react(event) {
    const type = String(event.type || "");
    if (type.startsWith("claim.") || type.startsWith("meeting.") || type === "release.answered") soon(loadClaims, 50);
    if (/^(section|entry|region)\./.test(type)) {
      soon(loadFiles, 300);
      if (selected && event.path === selected.path) soon(loadDetail, 300);
    }
    if (type.startsWith("reconcile.")) soon(loadRecons, 50);
    if (type.startsWith("message.")) soon(loadMessages, 100);
    // a claim that ends returns its item at the queue's next look, which /api/work is
    if (type.startsWith("work.") || type.startsWith("claim.")) soon(loadWork, 100);
    soon(loadMetrics, type.startsWith("claim.") ? 200 : 1000);
  }

  // ---- the stream ----------------------------------------------------------------------

  let stream = null;
  let retryMs = 1000;

  function connect() {
    if (stream) stream.close();
    // ?since: the server replays the log after that id first (from 0 without it); the
    // browser's own reconnects send Last-Event-ID instead, which the server prefers.
    // An EventSource cannot send a header: the token goes in the query, to this origin only.
    const token = encodeURIComponent(TOKEN);
    stream = new EventSource(`/api/stream?since=${maxEventId}&token=${token}`);
    stream.onopen = () => {
      retryMs = 1000;
      setConn("live");
      catchUp(); // whatever landed while we were away, or before the stream opened
    };
    stream.onmessage = (message) => {
      let event = null;
      try {
        event = JSON.parse(message.data);
      } catch (_) {
        return;
      }
      if (!event || typeof event.id !== "number") return;
      const gap = maxEventId > 0 && event.id > maxEventId + 1;
      addEvents([event], true);
      react(event);
      if (gap) soon(catchUp, 100);
    };
    stream.onerror = () => {
      if (unauthorized) {
        stream.close();
        return;
      }
      setConn("reconnecting", "reconnecting…");
      if (stream.readyState === EventSource.CLOSED) {
        // the browser gave up (an HTTP error): try again ourselves, more slowly each time
        setTimeout(connect, retryMs);
        retryMs = Math.min(retryMs * 2, 30000);
        loadStatus(); // a 401 here tells us the token is wrong (the server restarted)
      }
    };
  }

  // ---- files and sections --------------------------------------------------------------

  let selected = null; // {path, key}

  const loadFiles = loader("files", async () => {
    const data = await api("/api/files");
    const files = data.files || [];
    keyed($("files-list"), files, (f) => String(f.path), fileBlock,
      () => el("p", { class: "hint" }, "No managed files."));
    $("count-files").textContent = `(${files.length})`;
    markSelected();
  });

  function fileBlock(file) {
    const block = el("article", { class: "file" });
    block.append(el("h3", { class: "file-h" }, el("code", null, orDash(file.path)), " ",
      badge(`class-${String(file.class || "unmanaged").replace(/[^a-z-]/g, "")}`, orDash(file.class))));
    if (file.class === "private") {
      block.append(el("p", { class: "hint" }, "Private to its agent: its text is never served."));
      return block;
    }
    const sections = file.sections || [];
    if (!sections.length) {
      block.append(el("p", { class: "hint" }, "No sections."));
      return block;
    }
    const body = el("tbody");
    for (const section of sections) body.append(sectionRow(file, section));
    block.append(el("div", { class: "scroll" }, el("table", { class: "sections" },
      el("caption", { class: "visually-hidden" }, `Sections of ${file.path}`),
      el("thead", null, el("tr", null,
        el("th", { scope: "col" }, "Section"),
        el("th", { scope: "col" }, "Rev"),
        el("th", { scope: "col" }, "Last writer"),
        el("th", { scope: "col" }, "Change"),
        el("th", { scope: "col" }, "When"))),
      body)));
    return block;
  }

  function sectionRow(file, section) {
    const level = Math.min(Math.max(Number(section.level) || 1, 1), 6);
    const button = el("button", {
      type: "button",
      class: `sec-btn lvl-${level}`,
      "aria-pressed": "false",
      title: section.title ? `${section.title} — show its text and history` : "show its text and history",
    }, orDash(section.key));
    button.dataset.path = String(file.path);
    button.dataset.key = String(section.key);
    button.dataset.focus = `${file.path}#${section.key}`;
    const last = section.last || null;
    return el(
      "tr",
      null,
      el("td", null, button),
      el("td", { class: "num" }, orDash(section.rev)),
      el("td", null, last ? el("span", { class: "agent" }, orDash(last.actor)) : "—"),
      el("td", null, last && last.type ? el("span", { class: `type type-${category(last.type)}` }, last.type) : "—"),
      el("td", { class: "nowrap" }, last && last.ts ? ago(last.ts) : "—"),
    );
  }

  function markSelected() {
    for (const button of $("files-list").querySelectorAll("button.sec-btn")) {
      const on = Boolean(selected && button.dataset.path === selected.path && button.dataset.key === selected.key);
      button.setAttribute("aria-pressed", on ? "true" : "false");
    }
  }

  const loadDetail = loader("section", async () => {
    const want = selected;
    if (!want) return;
    const query = `path=${encodeURIComponent(want.path)}&key=${encodeURIComponent(want.key)}`;
    let data;
    try {
      data = await api(`/api/sections?${query}`);
    } catch (err) {
      if (selected !== want) return;
      $("detail-hint").hidden = false;
      $("detail-hint").textContent = `${want.path}#${want.key}: ${err.message}`;
      $("detail-body").hidden = true;
      return;
    }
    if (selected !== want) return;
    renderDetail(data);
  });

  function renderDetail(data) {
    $("detail-h").textContent = `${data.path}#${data.key}`;
    $("detail-hint").hidden = true;
    $("detail-body").hidden = false;
    const meta = [];
    if (data.heading) meta.push(String(data.heading));
    meta.push(`rev ${orDash(data.rev)}`);
    if (data.hash) meta.push(String(data.hash).slice(0, 19));
    if (data.file_rev !== undefined) meta.push(`file rev ${data.file_rev}`);
    $("detail-meta").textContent = meta.join(" · ");
    $("detail-content").textContent = data.content || "";
    const rows = (data.history || []).map((event) => el(
      "tr",
      null,
      el("td", { class: "num muted" }, orDash(event.id)),
      el("td", { class: "nowrap" }, el("time", { datetime: event.ts, title: event.ts }, fmtTime(event.ts))),
      el("td", null, el("span", { class: "agent" }, orDash(event.actor)), signatureMark(event)),
      el("td", null, el("span", { class: `type type-${category(event.type)}` }, orDash(event.type))),
      el("td", { class: "num" }, orDash(event.data && (event.data.rev ?? event.data.new_rev))),
    ));
    $("history-body").replaceChildren(...(rows.length ? rows : [emptyRow(5, "No recorded changes.")]));
  }

  function select(path, key) {
    selected = { path, key };
    markSelected();
    $("detail-h").textContent = `${path}#${key}`;
    $("detail-hint").hidden = false;
    $("detail-hint").textContent = "Loading…";
    $("detail-body").hidden = true;
    $("detail-h").focus();
    loadDetail();
  }

  // ---- reconciliations -----------------------------------------------------------------

  const resolving = new Set(); // ids being resolved: never shown again once asked

  const loadRecons = loader("reconciliations", async () => {
    const data = await api("/api/reconciliations");
    const open = (data.reconciliations || []).filter(
      (r) => (r.state === undefined || r.state === "open") && !resolving.has(String(r.id)));
    keyed($("recons-list"), open, (r) => String(r.id), reconBlock,
      () => el("p", { class: "hint" }, "No open reconciliations."));
    const count = $("count-recons");
    count.textContent = `(${open.length})`;
    count.parentElement.classList.toggle("attention", open.length > 0);
  });

  function diffView(diff) {
    const pre = el("pre", { class: "diff", tabindex: "0" });
    for (const line of String(diff || "").split("\n")) {
      let kind = "ctx";
      if (line.startsWith("+++") || line.startsWith("---")) kind = "file";
      else if (line.startsWith("@@")) kind = "hunk";
      else if (line.startsWith("+")) kind = "add";
      else if (line.startsWith("-")) kind = "del";
      pre.append(el("span", { class: `dl dl-${kind}` }, `${line}\n`));
    }
    return pre;
  }

  function reconBlock(r) {
    const id = String(r.id);
    const keep = el("button", { type: "button", class: "btn btn-primary" }, "Keep human");
    const take = el("button", { type: "button", class: "btn" }, "Take generated");
    keep.dataset.how = "keep-human";
    take.dataset.how = "take-generated";
    keep.dataset.focus = "keep-human";
    take.dataset.focus = "take-generated";
    const error = el("p", { class: "error", role: "alert", hidden: true });
    const block = el(
      "article",
      { class: "recon", "aria-labelledby": `recon-h-${id}` },
      el("h3", { id: `recon-h-${id}` }, `#${id} `, el("code", null, orDash(r.path)), ` — region `,
        el("code", null, orDash(r.region))),
      el("p", { class: "meta" }, `opened by ${orDash(r.opened_by)} `,
        r.opened_at ? ago(r.opened_at) : ""),
      el("p", { class: "legend" }, el("span", { class: "dl-del mark" }, "- line"),
        " memkeeper's rendering   ", el("span", { class: "dl-add mark" }, "+ line"), " the hand edit"),
      diffView(r.diff),
      el("div", { class: "actions" }, keep, take),
      error,
    );
    for (const button of [keep, take]) {
      button.addEventListener("click", () => resolve(id, button.dataset.how, block));
    }
    return block;
  }

  async function resolve(id, how, block) {
    const buttons = block.querySelectorAll("button");
    const error = block.querySelector(".error");
    buttons.forEach((b) => { b.disabled = true; });
    block.setAttribute("aria-busy", "true");
    error.hidden = true;
    try {
      await post(`/api/reconciliations/${encodeURIComponent(id)}/resolve`, { how });
    } catch (err) {
      block.removeAttribute("aria-busy");
      buttons.forEach((b) => { b.disabled = false; });
      error.hidden = false;
      error.textContent = `Could not resolve #${id}: ${err.message}`;
      return;
    }
    resolving.add(id);
    const next = block.nextElementSibling || block.previousElementSibling;
    block.remove();
    const said = how === "keep-human" ? "kept the hand edit" : "took the generated text";
    $("recons-notice").textContent = `Reconciliation #${id} resolved: ${said}.`;
    const target = next && next.querySelector("button");
    if (target) target.focus();
    else $("recons-h").focus();
    await loadRecons();
    soon(loadFiles, 300);
  }

  // ---- work ----------------------------------------------------------------------------

  const loadWork = loader("work", async () => {
    const data = await api("/api/work");
    const working = data.working || [];
    const ready = data.ready || [];
    const c = data.counts || {};
    keyed($("working-body"), working, (w) => String(w.id), workingRow,
      () => emptyRow(5, "Nobody works on an item."));
    keyed($("ready-body"), ready, (r) => `${r.position}:${r.id}`, readyRow,
      () => emptyRow(5, "No item is ready."));
    $("count-work").textContent = `(${working.length}/${ready.length})`;
    $("work-counts").textContent = `${orDash(c.claimed)} claimed · ${orDash(c.ready)} ready · ` +
      `${orDash(c.open)} open · ${orDash(c.done)} done · ${orDash(c.failed)} failed` +
      (c.blocked ? ` · ${c.blocked} blocked (waiting on a failed item: memkeeper work retry)` : "");
  });

  function workingRow(w) {
    return el(
      "tr",
      { "data-item": String(w.id) },
      el("td", { class: "num" }, orDash(w.id)),
      el("td", { class: "objective" }, orDash(w.title)),
      el("td", null, (w.paths || []).length ? targetsList(w.paths) : "—"),
      el("td", null, el("span", { class: "agent" }, orDash(w.agent)), " ",
        el("span", { class: "muted id" }, orDash(w.claim)),
        w.idle ? " " : null, w.idle ? idleBadge(w.idle) : null),
      el("td", { class: "nowrap" }, w.since ? ago(w.since) : "—"),
    );
  }

  function readyRow(r) {
    return el(
      "tr",
      { "data-item": String(r.id) },
      el("td", { class: "num" }, orDash(r.position)),
      el("td", { class: "num" }, orDash(r.id)),
      el("td", { class: "objective" }, orDash(r.title)),
      el("td", null, (r.paths || []).length ? targetsList(r.paths) : "—"),
      el("td", { class: "num" }, orDash(r.priority)),
    );
  }

  // ---- messages ------------------------------------------------------------------------

  const loadMessages = loader("messages", async () => {
    const data = await api("/api/messages");
    const list = data.messages || [];
    keyed($("messages-body"), list, (m) => String(m.id), messageRow,
      () => emptyRow(8, "No messages."));
    $("count-messages").textContent = `(${list.length})`;
    const known = new Set(list.flatMap((m) => [m.sender, m.to]).filter(Boolean));
    const claims = await api("/api/claims");
    for (const c of claims.claims || []) known.add(c.agent);
    const options = Array.from(known).sort().map((who) => el("option", { value: who }));
    $("message-agents").replaceChildren(...options);
  });

  function messageRow(m) {
    let state = "to all: each acknowledges its own";
    if (m.to !== "all") state = m.acked_at ? "acknowledged" : m.delivered_at ? "delivered" : "waiting";
    return el(
      "tr",
      null,
      el("td", { class: "num" }, orDash(m.id)),
      el("td", { class: "nowrap" }, m.sent_at ? el("time", { datetime: m.sent_at, title: m.sent_at }, fmtTime(m.sent_at)) : "—"),
      el("td", null, el("span", { class: "agent" }, orDash(m.sender))),
      el("td", null, el("span", { class: "agent" }, orDash(m.to))),
      el("td", null, badge(`kind-${String(m.kind || "").replace(/[^a-z-]/g, "")}`, orDash(m.kind))),
      el("td", null, m.about ? el("code", null, String(m.about)) : "—"),
      el("td", { class: "text" }, orDash(m.text)),
      el("td", null, state),
    );
  }

  async function sendMessage(e) {
    e.preventDefault();
    const button = $("message-send");
    const notice = $("message-notice");
    const payload = {
      to: $("message-to").value.trim(),
      text: $("message-text").value,
      about: $("message-about").value.trim() || null,
    };
    button.disabled = true;
    try {
      const done = await post("/api/messages", payload);
      notice.textContent = `Sent message #${done.message.id} to ${done.message.to}.`;
      $("message-text").value = "";
    } catch (err) {
      notice.textContent = `Not sent: ${err.message}`;
    } finally {
      button.disabled = false;
    }
    await loadMessages();
  }

  // ---- metrics -------------------------------------------------------------------------

  const METRICS = [
    ["claims_held", "Claims held", "now"],
    ["queue_depth", "Queue depth", "now"],
    ["claims_granted", "Claims granted", "window"],
    ["deadlocks_broken", "Deadlocks broken", "window"],
    ["ttl_expirations", "TTL expirations", "window"],
    ["conflicts", "Conflicts", "window"],
  ];

  const loadMetrics = loader("metrics", async () => {
    const data = await api("/api/metrics");
    const items = METRICS.map(([key, label, when]) => el("div", { class: `stat stat-${when}` },
      el("dt", null, label), el("dd", null, orDash(data[key]))));
    $("metrics-list").replaceChildren(...items);
    $("metrics-window").textContent =
      `Claims held and queue depth are now; the other counts cover the last ${fmtWindow(data.window_s)}.`;
    const rows = (data.contention || []).map(contentionRow);
    $("contention-body").replaceChildren(
      ...(rows.length ? rows : [emptyRow(6, "No contention in this window.")]));
  });

  function contentionRow(c) {
    const waitedOn = el("ul", { class: "targets" });
    for (const w of c.waited_on || []) {
      if (w && typeof w === "object") {
        waitedOn.append(el("li", null, el("span", { class: "agent" }, orDash(w.agent)), " ",
          el("span", { class: "muted id" }, orDash(w.id))));
      } else {
        waitedOn.append(el("li", null, el("span", { class: "agent" }, orDash(w))));
      }
    }
    const outcome = String(c.outcome || "");
    return el(
      "tr",
      null,
      el("td", { class: "nowrap" }, c.ts ? el("time", { datetime: c.ts, title: c.ts }, fmtTime(c.ts)) : "—"),
      el("td", null, el("span", { class: "agent" }, orDash(c.agent)), " ",
        el("span", { class: "muted id" }, orDash(c.id))),
      el("td", null, targetsList(c.targets)),
      el("td", null, (c.waited_on || []).length ? waitedOn : "—"),
      el("td", { class: "num" }, fmtSeconds(c.waited_s)),
      el("td", null, badge(`outcome-${outcome.replace(/[^a-z]/g, "") || "unknown"}`, orDash(outcome))),
    );
  }

  // ---- start ---------------------------------------------------------------------------

  function refreshAll() {
    loadStatus();
    loadClaims();
    loadFiles();
    loadRecons();
    loadWork();
    loadMessages();
    loadMetrics();
    if (selected) loadDetail();
  }

  function start() {
    if (!TOKEN) setUnauthorized();
    for (const id of ["filter-type", "filter-agent", "filter-path"]) {
      $(id).addEventListener("input", applyFilters);
    }
    $("event-filters").addEventListener("submit", (e) => e.preventDefault());
    $("files-list").addEventListener("click", (e) => {
      const button = e.target instanceof Element ? e.target.closest("button.sec-btn") : null;
      if (button) select(button.dataset.path, button.dataset.key);
    });
    $("recons-h").setAttribute("tabindex", "-1");
    $("message-form").addEventListener("submit", sendMessage);
    refreshAll();
    loadRecentEvents().then(() => {
      if (!events.size) addEvents([], false);
      document.documentElement.dataset.loaded = "true";
      connect(); // after the first page of events: the stream goes on from the newest
    });
    setInterval(() => {
      refreshAll();
      catchUp();
    }, POLL_MS);
    setInterval(tick, TICK_MS);
  }

  start();
})();
