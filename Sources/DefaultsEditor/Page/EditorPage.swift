/// The settings editor's page: one HTML page, its style sheet and its script, served by
/// ``EditorResponder`` as `index.html`, `app.css` and `app.js` under the server's secret path.
///
/// The page lists every key of the domain (the schema's keys, then the keys the schema does not
/// declare), with a control fit for each type, and talks to the server only through the relative
/// URLs `api/domain`, `api/explain`, `api/write`, `api/reset` and `api/events`, as the
/// Content-Security-Policy allows: no inline scripts, styles or handlers, nothing from elsewhere.
/// A test driver finds its hooks by class (`value-control`, `set`, `reset`, `error`, …), each
/// row by `data-key`, and waits for `body[data-ready="true"]`. A row holds at first only what a
/// person reads (name, value, source, description, notes); its edit area, error and tools are
/// built when it comes near the viewport or takes focus, so a driver scrolls a row into view and
/// waits for its `.value-control` before acting on it.
enum EditorPage {
    /// `index.html`: the page's markup. `app.css` and `app.js` are loaded relatively; nothing is
    /// inline (the Content-Security-Policy forbids inline scripts, styles and handlers).
    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <meta name="color-scheme" content="light dark">
        <link rel="icon" href="data:,">
        <title>Settings</title>
        <link rel="stylesheet" href="app.css">
        <script src="app.js" defer></script>
        </head>
        <body>
        <a class="skip-link" href="#keys">Skip to the keys</a>
        <header class="page-header">
          <h1 id="domain-name">Settings</h1>
          <p id="schema-info" class="schema-info">Loading…</p>
          <p id="schema-problem" class="warning" hidden></p>
        </header>
        <div id="toolbar" class="toolbar" role="search" aria-label="Filter keys">
          <div class="search-field">
            <label for="search">Search</label>
            <input type="search" id="search" autocomplete="off" spellcheck="false"
                   placeholder="Name or description" aria-describedby="search-hint">
            <span id="search-hint" class="vh">Press slash to come back here.</span>
          </div>
          <label class="check"><input type="checkbox" id="only-modified"> Only modified</label>
          <span id="shown-count" class="shown-count" aria-live="polite"></span>
          <span class="spacer"></span>
          <span id="live-status" class="live-status" data-state="connecting" aria-live="polite">connecting</span>
          <button type="button" id="reset-all" class="danger-outline">Reset all…</button>
        </div>
        <p id="status" class="status" role="status" aria-live="polite"></p>
        <main id="keys" tabindex="-1">
          <section id="schema-section" class="key-section" aria-labelledby="schema-title">
            <h2 id="schema-title" tabindex="-1">Keys</h2>
            <p class="empty-note" hidden>The schema declares no keys.</p>
            <div class="rows"></div>
          </section>
          <section id="extra-section" class="key-section" aria-labelledby="extra-title">
            <h2 id="extra-title" tabindex="-1">Keys without a schema</h2>
            <p class="empty-note" hidden>None: every key the files hold is in the schema.</p>
            <div class="rows"></div>
            <form id="add-key" class="add-key" novalidate aria-labelledby="add-title">
              <h3 id="add-title">Add key</h3>
              <div class="add-fields">
                <div class="field">
                  <label for="add-name">Name</label>
                  <input id="add-name" autocomplete="off" spellcheck="false" required>
                </div>
                <div class="field">
                  <label for="add-type">Type</label>
                  <select id="add-type">
                    <option value="string">string</option>
                    <option value="integer">integer</option>
                    <option value="float">real</option>
                    <option value="boolean">boolean</option>
                    <option value="date">date</option>
                    <option value="data">data</option>
                    <option value="array">array</option>
                    <option value="dictionary">dictionary</option>
                  </select>
                </div>
                <div class="field grow">
                  <label for="add-value">Value</label>
                  <textarea id="add-value" rows="1" spellcheck="false" aria-describedby="add-hint add-error"></textarea>
                </div>
                <button type="submit" class="primary">Add</button>
              </div>
              <p id="add-hint" class="hint"></p>
              <p id="add-error" class="error" role="alert"></p>
            </form>
          </section>
        </main>
        <dialog id="reset-all-dialog" aria-labelledby="reset-all-title" aria-describedby="reset-all-text">
          <h2 id="reset-all-title">Reset all keys?</h2>
          <p id="reset-all-text">Every value in your own file for this domain is removed, and programs read the
            defaults again (or the vendor’s and the administrator’s values). This cannot be undone.</p>
          <p id="reset-all-error" class="error" role="alert"></p>
          <div class="dialog-buttons">
            <button type="button" id="cancel-reset-all" autofocus>Cancel</button>
            <button type="button" id="confirm-reset-all" class="danger">Reset</button>
          </div>
        </dialog>
        <noscript><p class="warning">The settings editor needs JavaScript.</p></noscript>
        </body>
        </html>
        """#

    /// `app.css`: a calm look in the system's font, light and dark (`prefers-color-scheme`), with
    /// visible focus.
    static let css = #"""
        /* The settings editor's page: calm, system colours and font, light and dark. */
        :root {
          color-scheme: light dark;
          --bg: #f6f6f5;
          --card: #ffffff;
          --text: #1d1d1f;
          --muted: #55585e;
          --border: #c9ccd1;
          --accent: #1a5fb4;
          --accent-text: #ffffff;
          --focus: #1a5fb4;
          --warning-bg: #fff4d6;
          --warning-text: #6b4a00;
          --error: #b3261e;
          --error-bg: #fdecea;
          --modified: #1a5fb4;
          --managed: #6b4fbb;
          --notice-bg: #e8f0fb;
          --switch-off: #8a8f98;
          --toolbar-height: 4rem;
        }

        @media (prefers-color-scheme: dark) {
          :root {
            --bg: #1c1c1e;
            --card: #26272a;
            --text: #ececec;
            --muted: #b4b8bf;
            --border: #4a4d53;
            --accent: #78aeed;
            --accent-text: #10161f;
            --focus: #99c1f1;
            --warning-bg: #3d3217;
            --warning-text: #f6d57a;
            --error: #ff938a;
            --error-bg: #3e2322;
            --modified: #99c1f1;
            --managed: #c1a9f5;
            --notice-bg: #1f2c3d;
            --switch-off: #80858e;
          }
        }

        *, *::before, *::after { box-sizing: border-box; }
        [hidden] { display: none !important; }

        html { scroll-padding-top: calc(var(--toolbar-height) + 0.75rem); }

        body {
          margin: 0;
          background: var(--bg);
          color: var(--text);
          font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Cantarell, Ubuntu, sans-serif;
        }

        a { color: var(--accent); }
        code, pre, .path, input[type="text"], textarea {
          font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace;
          font-size: 0.93em;
        }
        pre { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }

        :focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
        .key-row:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }

        .vh {
          position: absolute !important;
          width: 1px; height: 1px;
          overflow: hidden;
          clip-path: inset(50%);
          white-space: nowrap;
        }

        .skip-link {
          position: absolute;
          left: 0.5rem;
          top: -3rem;
          padding: 0.4rem 0.8rem;
          background: var(--card);
          border: 1px solid var(--border);
          border-radius: 6px;
          z-index: 10;
        }
        .skip-link:focus { top: 0.5rem; }

        .page-header { padding: 1.25rem 1.5rem 0.5rem; max-width: 68rem; margin: 0 auto; }
        .page-header h1 { margin: 0 0 0.25rem; font-size: 1.5rem; font-weight: 600; overflow-wrap: anywhere; }
        .schema-info { margin: 0; color: var(--muted); overflow-wrap: anywhere; }

        .toolbar {
          position: sticky;
          top: 0;
          z-index: 5;
          display: flex;
          flex-wrap: wrap;
          align-items: center;
          gap: 0.5rem 1rem;
          padding: 0.6rem max(1.5rem, calc((100% - 65rem) / 2));
          background: var(--bg);
          border-bottom: 1px solid var(--border);
        }
        .search-field { display: flex; align-items: center; gap: 0.5rem; flex: 1 1 18rem; }
        .search-field input { flex: 1; min-width: 8rem; }
        .check { display: inline-flex; align-items: center; gap: 0.35rem; }
        .shown-count { color: var(--muted); }
        .spacer { flex: 1 1 0; }
        .live-status {
          font-size: 0.87em;
          padding: 0.1rem 0.55rem;
          border-radius: 1rem;
          border: 1px solid var(--border);
          color: var(--muted);
        }
        .live-status::before { content: "● "; }
        .live-status[data-state="live"]::before { color: #2e8540; }
        .live-status[data-state="reconnecting"]::before { color: #c07b00; }

        .status { max-width: 68rem; margin: 0.5rem auto 0; padding: 0 1.5rem; min-height: 1.45em; color: var(--muted); }

        main { max-width: 68rem; margin: 0 auto; padding: 0 1.5rem 4rem; }
        main:focus { outline: none; }
        .key-section > h2 { font-size: 1.2rem; font-weight: 600; margin: 1.5rem 0 0.75rem; }
        .group-title {
          font-size: 1.05rem;
          font-weight: 600;
          margin: 1.25rem 0 0.5rem;
          color: var(--muted);
          border-bottom: 1px solid var(--border);
          padding-bottom: 0.2rem;
        }
        .empty-note { color: var(--muted); }

        /* Rows: content-visibility spares laying out the thousands of rows no one sees yet. */
        .key-row {
          background: var(--card);
          border: 1px solid var(--border);
          border-radius: 8px;
          padding: 0.75rem 1rem;
          margin: 0 0 0.6rem;
          content-visibility: auto;
          contain-intrinsic-size: auto 11rem;
        }
        .key-row.is-modified { border-left: 4px solid var(--modified); }
        .key-row.is-edited { box-shadow: 0 0 0 2px var(--accent) inset; }
        .key-row:target { border-color: var(--accent); }

        .row-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 0.4rem 0.6rem; }
        .key-name {
          margin: 0;
          font-size: 1rem;
          font-weight: 600;
          font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace;
          overflow-wrap: anywhere;
        }
        .key-name a { color: var(--text); text-decoration: none; }
        .key-name a:hover, .key-name a:focus-visible { text-decoration: underline; }
        .badge { font-size: 0.78rem; padding: 0 0.5rem; border-radius: 1rem; border: 1px solid currentColor; }
        .badge-modified { color: var(--modified); }
        .badge-syncs { color: var(--muted); }
        .badge-managed { color: var(--managed); }

        .description { margin: 0.25rem 0 0.4rem; color: var(--muted); }
        .facts, .current { margin: 0 0 0.3rem; }
        .facts { color: var(--muted); font-size: 0.93em; overflow-wrap: anywhere; }
        .current-value { white-space: pre-wrap; font-weight: 600; }
        .current-value.multiline {
          display: block;
          margin: 0.2rem 0;
          padding: 0.3rem 0.5rem;
          border-left: 3px solid var(--border);
          max-height: 12rem;
          overflow: auto;
        }
        .source { color: var(--muted); font-size: 0.9em; overflow-wrap: anywhere; }

        .warning, .problem {
          background: var(--warning-bg);
          color: var(--warning-text);
          padding: 0.35rem 0.6rem;
          border-radius: 6px;
          margin: 0.35rem 0;
        }
        .problem::before, .warning::before { content: "⚠ "; }
        .managed { color: var(--managed); margin: 0.35rem 0; }
        .managed:empty { display: none; }

        .edit { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem; margin-top: 0.4rem; }
        .edit .value-control { flex: 0 1 26rem; min-width: 0; }
        .edit textarea.value-control { flex: 1 1 100%; }
        .edit input[type="datetime-local"].value-control, .edit select.value-control {
          flex: 0 1 auto;
          max-width: 100%;
        }
        .edit input[role="switch"].value-control { flex: none; }

        input, select, textarea, button {
          font: inherit;
          color: var(--text);
          background: var(--card);
          border: 1px solid var(--border);
          border-radius: 6px;
          padding: 0.35rem 0.55rem;
        }
        input[type="checkbox"] { padding: 0; }
        textarea { resize: vertical; tab-size: 4; }
        input:read-only:not([type="checkbox"]), textarea:read-only { background: var(--bg); color: var(--muted); }
        [aria-invalid="true"] { border-color: var(--error); }

        button { cursor: pointer; background: var(--bg); }
        button:hover:not(:disabled) { border-color: var(--accent); }
        button:disabled { opacity: 0.55; cursor: not-allowed; }
        button.primary, button.set {
          background: var(--accent);
          color: var(--accent-text);
          border-color: var(--accent);
        }
        button.danger { background: var(--error); color: var(--card); border-color: var(--error); }
        button.danger-outline { color: var(--error); border-color: var(--error); }

        /* A switch drawn from a checkbox; forced-colours mode keeps the plain checkbox. */
        input[role="switch"] {
          appearance: none;
          width: 2.6rem;
          height: 1.45rem;
          margin: 0;
          border-radius: 1rem;
          background: var(--switch-off);
          border: 1px solid var(--switch-off);
          position: relative;
          cursor: pointer;
          flex: none;
        }
        input[role="switch"]::before {
          content: "";
          position: absolute;
          top: 2px; left: 2px;
          width: calc(1.45rem - 6px); height: calc(1.45rem - 6px);
          border-radius: 50%;
          background: #fff;
          transition: transform 0.12s ease-out;
        }
        input[role="switch"]:checked { background: var(--accent); border-color: var(--accent); }
        input[role="switch"]:checked::before { transform: translateX(1.15rem); }
        input[role="switch"]:disabled { opacity: 0.55; cursor: not-allowed; }
        .switch-state { color: var(--muted); font-family: ui-monospace, monospace; }
        @media (forced-colors: active) {
          input[role="switch"] { appearance: auto; width: auto; height: auto; }
          input[role="switch"]::before { content: none; }
        }
        @media (prefers-reduced-motion: reduce) {
          input[role="switch"]::before { transition: none; }
        }

        .error { color: var(--error); margin: 0.35rem 0 0; font-weight: 500; }
        .error:empty { display: none; }
        .add-key .error:empty { display: none; }

        .conflict, .notice { border-radius: 6px; padding: 0.5rem 0.75rem; margin: 0.5rem 0 0; }
        .conflict { background: var(--error-bg); border: 1px solid var(--error); }
        .conflict p { margin: 0 0 0.35rem; }
        .conflict-value {
          background: var(--card);
          border: 1px solid var(--border);
          border-radius: 4px;
          padding: 0.3rem 0.5rem;
          margin-bottom: 0.5rem;
        }
        .conflict .buttons { display: flex; gap: 0.5rem; flex-wrap: wrap; }
        .notice { background: var(--notice-bg); border: 1px solid var(--accent); }
        .notice code { white-space: pre-wrap; font-weight: 600; }
        .notice button { margin-left: 0.5rem; padding: 0.15rem 0.55rem; }

        .tools { display: flex; flex-wrap: wrap; gap: 0.4rem; margin-top: 0.5rem; }
        .tools button { font-size: 0.87rem; padding: 0.2rem 0.6rem; }
        .explain[aria-expanded="true"] { border-color: var(--accent); }
        .explain::after { content: " ▸"; content: " ▸" / ""; }
        .explain[aria-expanded="true"]::after { content: " ▾"; content: " ▾" / ""; }
        .explain-body { margin-top: 0.5rem; overflow-x: auto; }
        .hint { color: var(--muted); margin: 0.35rem 0 0; }

        table.layers { border-collapse: collapse; width: 100%; font-size: 0.92em; }
        table.layers caption { text-align: left; color: var(--muted); padding-bottom: 0.3rem; }
        table.layers th, table.layers td {
          text-align: left;
          vertical-align: top;
          border-bottom: 1px solid var(--border);
          padding: 0.3rem 0.5rem;
        }
        table.layers td.path { overflow-wrap: anywhere; }
        table.layers tr.is-read { font-weight: 600; }
        .read-mark { width: 2.5rem; }

        .add-key {
          background: var(--card);
          border: 1px dashed var(--border);
          border-radius: 8px;
          padding: 0.75rem 1rem;
          margin-top: 1rem;
        }
        .add-key h3 { margin: 0 0 0.5rem; font-size: 1rem; }
        .add-fields { display: flex; flex-wrap: wrap; gap: 0.6rem; align-items: flex-end; }
        .field { display: flex; flex-direction: column; gap: 0.2rem; }
        .field.grow { flex: 1 1 16rem; }
        .field textarea { width: 100%; }

        dialog {
          background: var(--card);
          color: var(--text);
          border: 1px solid var(--border);
          border-radius: 10px;
          padding: 1.25rem 1.5rem;
          max-width: min(32rem, 92vw);
        }
        dialog::backdrop { background: rgb(0 0 0 / 0.45); }
        dialog h2 { margin: 0 0 0.5rem; font-size: 1.15rem; }
        .dialog-buttons { display: flex; justify-content: flex-end; gap: 0.5rem; margin-top: 1rem; }

        @media (max-width: 40rem) {
          .page-header, main, .status { padding-left: 0.75rem; padding-right: 0.75rem; }
          .toolbar { padding: 0.5rem 0.75rem; }
          .edit .value-control:not([role="switch"]) { flex-basis: 100%; }
        }
        .explain-managed { color: var(--managed); margin: 0.35rem 0; }
        """#

    /// `app.js`: renders the domain with DOM APIs only (no text from the server is ever parsed as
    /// markup), writes, resets and explains keys, and follows `api/events`.
    static let javascript = #"""
        // The settings editor's page. Every string the server sends is untrusted text: it only ever
        // reaches the page through textContent, value and attributes, never as markup.
        'use strict';

        const GROUP_THRESHOLD = 30;   // more keys than this in a section: group them by prefix
        const OTHER = '';             // the group of keys whose prefix no other key shares

        const state = {
          rows: new Map(),            // key name -> row (see createRow)
          sections: {},               // schema / extra -> {el, list, empty, grouped, groups}
          query: '',
          onlyModified: false,
          nextId: 0,
          queued: new Map(),          // live changes waiting for the next frame
          queuedRemovals: new Set(),
          frame: 0,
          eventCount: 0,              // counts live changes, so a late snapshot does not undo a newer one
          touched: new Map(),         // key -> eventCount of its last live change
        };

        const $ = (id) => document.getElementById(id);

        // ---------------------------------------------------------------- small helpers

        function el(tag, className, text) {
          const node = document.createElement(tag);
          if (className) node.className = className;
          if (text !== undefined && text !== null) node.textContent = text;
          return node;
        }

        function button(className, text, label) {
          const node = el('button', className, text);
          node.type = 'button';
          if (label) node.setAttribute('aria-label', label);
          return node;
        }

        function uid(prefix) {
          state.nextId += 1;
          return prefix + state.nextId;
        }

        function announce(message) {
          const status = $('status');
          // Emptied first so that the same message twice is announced twice.
          status.textContent = '';
          requestAnimationFrame(() => { status.textContent = message; });
        }

        // A value as a message tells it: its first line, not too long.
        function short(value) {
          if (value == null) return 'no value';
          const line = value.split('\n', 1)[0];
          return line.length > 60 || line.length < value.length ? line.slice(0, 60) + '…' : line;
        }

        function sameEntry(a, b) {
          return JSON.stringify(a) === JSON.stringify(b);
        }

        function isReal(type) {
          return type === 'real' || type === 'float';
        }

        // One request to the server; never throws: a network failure is a status 0 with an error.
        async function request(method, url, body) {
          const init = {
            method, cache: 'no-store', credentials: 'same-origin', headers: { Accept: 'application/json' },
          };
          if (body !== undefined) {
            init.headers['Content-Type'] = 'application/json';
            init.body = JSON.stringify(body);
          }
          let response;
          try {
            response = await fetch(url, init);
          } catch (error) {
            return { status: 0, data: { error: 'The editor’s server did not answer. Is it still running?' } };
          }
          let data = null;
          try {
            data = await response.json();
          } catch (error) {
            data = { error: `The server answered ${response.status} ${response.statusText} without JSON.` };
          }
          return { status: response.status, data: data || {} };
        }

        function errorText(data, status) {
          return (data && typeof data.error === 'string' && data.error) || `The request failed (${status}).`;
        }

        // ---------------------------------------------------------------- dates

        function pad(number, width = 2) {
          return String(number).padStart(width, '0');
        }

        // ISO 8601 (any zone) -> the local "YYYY-MM-DDTHH:MM:SS[.mmm]" a datetime-local input shows.
        function isoToLocalInput(iso) {
          if (!iso) return '';
          const date = new Date(iso);
          if (Number.isNaN(date.getTime())) return '';
          let text = `${pad(date.getFullYear(), 4)}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
            `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
          if (date.getMilliseconds()) text += '.' + pad(date.getMilliseconds(), 3);
          return text;
        }

        // The input's local time -> ISO 8601 in UTC with Z, which the server reads.
        function localInputToIso(local) {
          if (!local) return '';
          const date = new Date(local);   // a date-time without an offset is local time
          if (Number.isNaN(date.getTime())) return local;
          return date.toISOString().replace(/\.000Z$/, 'Z');
        }

        // ---------------------------------------------------------------- grouping

        // "font.size" -> "font", "fontSize" -> "font", "NSWindowFrame" -> "NS", "AppleLocale" -> "Apple".
        function prefixOf(name) {
          const dot = name.indexOf('.');
          if (dot > 0) return name.slice(0, dot);
          const acronym = /^([A-Z]{2,})[A-Z][a-z]/.exec(name);
          if (acronym) return acronym[1];
          const camel = /^.[^A-Z]*(?=[A-Z])/.exec(name);
          return camel ? camel[0] : name;
        }

        function buildGroup(section, prefix) {
          const id = uid('group-');
          const group = { prefix, el: el('section', 'group'), list: el('div', 'rows'), rows: new Set() };
          const heading = el('h3', 'group-title', prefix === OTHER ? 'Other' : prefix);
          heading.id = id;
          group.el.setAttribute('aria-labelledby', id);
          group.el.append(heading, group.list);
          section.groups.set(prefix, group);
          return group;
        }

        // ---------------------------------------------------------------- rendering a domain

        function renderHeader(domain) {
          document.title = `${domain.domain} – Settings`;
          $('domain-name').textContent = domain.domain;
          const info = $('schema-info');
          info.replaceChildren();
          if (domain.schema) {
            info.append('Schema: ', el('code', 'path', domain.schema));
          } else {
            info.textContent = 'No schema: keys are shown as their files hold them.';
          }
          const problem = $('schema-problem');
          problem.textContent = domain.schemaProblem || '';
          problem.hidden = !domain.schemaProblem;
          $('reset-all-text').textContent = `Every value in your own file for ${domain.domain} is removed, and ` +
            'programs read the defaults again (or the vendor’s and the administrator’s values). ' +
            'This cannot be undone.';
        }

        function fillSection(section, entries) {
          const fragment = document.createDocumentFragment();
          section.groups = new Map();
          section.grouped = entries.length > GROUP_THRESHOLD;
          if (!section.grouped) {
            for (const entry of entries) fragment.append(createRow(entry, section, null).el);
          } else {
            const byPrefix = new Map();
            for (const entry of entries) {
              const prefix = prefixOf(entry.name);
              if (!byPrefix.has(prefix)) byPrefix.set(prefix, []);
              byPrefix.get(prefix).push(entry);
            }
            const others = [];
            for (const [prefix, list] of byPrefix) {
              if (list.length < 2) { others.push(...list); continue; }
              const group = buildGroup(section, prefix);
              for (const entry of list) group.list.append(createRow(entry, section, group).el);
              fragment.append(group.el);
            }
            if (others.length) {
              const group = buildGroup(section, OTHER);
              for (const entry of others) group.list.append(createRow(entry, section, group).el);
              fragment.append(group.el);
            }
          }
          section.list.replaceChildren(fragment);
        }

        function renderDomain(domain) {
          renderHeader(domain);
          if (nearObserver) nearObserver.disconnect();
          state.rows.clear();
          const keys = Array.isArray(domain.keys) ? domain.keys : [];
          fillSection(state.sections.schema, keys.filter((entry) => entry.inSchema));
          fillSection(state.sections.extra, keys.filter((entry) => !entry.inSchema));
          state.sections.schema.el.hidden = !domain.schema && state.sections.schema.list.childElementCount === 0;
          applyFilter();
          requestAnimationFrame(materializeInView);
        }

        // ---------------------------------------------------------------- one row

        // A row is built in two steps, so that a thousand of them are in the document quickly. First what
        // a person reads: the name (a link, so that the keyboard reaches every row), badges, description,
        // facts, the value and where it comes from, and notes (problem, managed, too large). Then, when
        // the row comes near the viewport, takes focus, or something needs them (see materialize): its
        // edit area (label, control, Set, Reset), its error and its tools (Explain, Copy name, Copy value).
        // Both are cloned from parts built once: far cheaper than building. A modified key's row (every
        // row, in a domain without a schema) comes with its badge.
        const skeletons = new Map();

        function skeleton(level, modified) {
          const key = level + (modified ? ' modified' : '');
          if (skeletons.has(key)) return skeletons.get(key);
          const row = el('article', 'key-row');
          row.tabIndex = -1;
          const head = el('div', 'row-head');
          head.append(el(level, 'key-name'));
          head.firstChild.append(el('a'));
          if (modified) {
            row.classList.add('is-modified');
            head.append(el('span', 'badge badge-modified', 'modified'));
          }
          const current = el('p', 'current');
          current.append('Value: ', el('code', 'current-value'), ' ', el('span', 'source'));
          row.append(head, el('p', 'description'), el('p', 'facts'), current);
          skeletons.set(key, row);
          return row;
        }

        let controlsSkeleton = null;

        function controlsPart() {
          if (!controlsSkeleton) {
            const edit = el('div', 'edit');
            edit.append(el('label', 'vh'), button('set', 'Set'), button('reset', 'Reset to default'));
            const error = el('p', 'error');
            error.setAttribute('role', 'alert');
            const tools = el('div', 'tools');
            const explain = button('explain', 'Explain');
            explain.setAttribute('aria-expanded', 'false');
            tools.append(explain, button('copy-name', 'Copy name'), button('copy-value', 'Copy value'));
            controlsSkeleton = document.createDocumentFragment();
            controlsSkeleton.append(edit, error, tools);
          }
          return controlsSkeleton.cloneNode(true);
        }

        // Rows come near the viewport (well before they are seen, so that scrolling never shows one
        // without its controls): build their controls. One observer for every row.
        const nearObserver = typeof IntersectionObserver === 'function' ?
          new IntersectionObserver(onNear, { rootMargin: '1500px 0px' }) : null;

        function onNear(changes) {
          for (const change of changes) {
            if (!change.isIntersecting) continue;
            const row = state.rows.get(change.target.dataset.key);
            if (row && row.el === change.target) materialize(row);
          }
        }

        function createRow(entry, section, group) {
          const name = entry.name;
          const modified = !!entry.modified;
          const node = skeleton(section.grouped ? 'h4' : 'h3', modified).cloneNode(true);
          const head = node.firstChild;
          const description = head.nextSibling;
          const facts = description.nextSibling;
          const current = facts.nextSibling;
          const row = {
            name, section, group, el: node, head, description, facts, edit: null, error: null,
            currentValue: current.firstElementChild, sourceText: current.lastChild,
            modifiedBadge: modified ? head.lastChild : null, isModified: modified, isManaged: false,
          };
          node.setAttribute('data-key', name);
          const link = head.firstChild.firstChild;
          link.textContent = name;
          link.setAttribute('href', '#' + encodeURIComponent(name));
          state.rows.set(name, row);
          if (group) group.rows.add(row);
          fillRow(row, entry);
          if (nearObserver) nearObserver.observe(node);
          else materialize(row);
          return row;
        }

        // The row's edit area, error and tools, built once. Every path that needs them calls this first.
        function materialize(row) {
          if (row.edit) return row;
          const base = uid('k');
          row.controlId = base + '-control';
          row.description.id = base + '-desc';
          const part = controlsPart();
          const [edit, error, tools] = part.children;
          row.edit = edit;
          row.error = error;
          error.id = base + '-error';
          const [label, setButton, resetButton] = edit.children;
          label.textContent = row.name;       // the control's name is the key's
          label.htmlFor = row.controlId;
          row.label = label;
          row.setButton = setButton;
          row.resetButton = resetButton;
          setButton.setAttribute('aria-label', 'Set ' + row.name);
          row.explainButton = tools.firstChild;
          for (const kind of NOTES) if (row[kind]) row[kind].id = row.controlId + '-' + kind;
          row.el.append(part);                // after the notes
          if (nearObserver) nearObserver.unobserve(row.el);
          fillControls(row, row.entry, false);
          describe(row);
          return row;
        }

        // The rows in the viewport get their controls before the page is first painted (the observer
        // would only tell of them after it): from the row at the top of the viewport, down.
        function materializeInView() {
          const bottom = innerHeight * 1.5;
          const near = [];
          for (let element = firstRowInView(); element && near.length < 100; element = adjacentRow(element, true)) {
            const box = element.getBoundingClientRect();
            if (box.top > bottom) break;
            const row = state.rows.get(element.dataset.key);
            if (row && !row.edit && box.bottom > 0) near.push(row);
          }
          for (const row of near) materialize(row);
        }

        function firstRowInView() {
          const main = $('keys');
          const x = main.getBoundingClientRect().left + 24;
          const top = Math.max(0, $('toolbar').getBoundingClientRect().bottom) + 1;
          for (let y = top; y < innerHeight; y += 48) {
            const hit = document.elementFromPoint(x, y);
            const row = hit && main.contains(hit) && hit.closest('.key-row');
            if (row) return row;              // else a heading, a gap between rows: look lower
          }
          return null;
        }

        // A jump further than the observer's margin (End, a scrollbar dragged): the rows now in view get
        // their controls before the frame is painted, not one frame after it. Scroll events come once a
        // frame, before its animation frame callbacks.
        let lastScrollY = 0;
        let scrollCheck = 0;

        function onScroll() {
          const y = scrollY;
          if (Math.abs(y - lastScrollY) > 1000 && !scrollCheck) {
            scrollCheck = requestAnimationFrame(() => {
              scrollCheck = 0;
              materializeInView();
            });
          }
          lastScrollY = y;
        }

        // Focus entering a row (Tab onto its name): its controls must be there for the next Tab, and the
        // row before it too for Shift+Tab.
        function onRowsFocusin(event) {
          const row = rowOf(event.target);
          if (!row) return;
          materialize(row);
          for (const forward of [false, true]) {
            const next = adjacentRow(row.el, forward);
            const neighbour = next && state.rows.get(next.dataset.key);
            if (neighbour) materialize(neighbour);
          }
        }

        // The shown row before or after `element` in document order, across groups and sections.
        function adjacentRow(element, forward) {
          const main = $('keys');
          const step = forward ? 'nextElementSibling' : 'previousElementSibling';
          for (let node = element; node && node !== main; node = node.parentElement) {
            for (let sibling = node[step]; sibling; sibling = sibling[step]) {
              if (sibling.hidden) continue;
              if (sibling.classList.contains('key-row')) return sibling;
              const rows = sibling.querySelectorAll('.key-row:not([hidden])');
              for (let i = 0; i < rows.length; i += 1) {
                const row = rows[forward ? i : rows.length - 1 - i];
                if (!row.parentElement.closest('[hidden]')) return row;
              }
            }
          }
          return null;
        }

        // A badge in the row's head, made when first shown.
        function setBadge(row, kind, show) {
          const key = kind + 'Badge';
          if (!row[key]) {
            if (!show) return;
            row[key] = el('span', 'badge badge-' + kind, kind);
            const order = ['modified', 'syncs', 'managed'];
            const later = order.slice(order.indexOf(kind) + 1).map((k) => row[k + 'Badge']).find(Boolean);
            row.head.insertBefore(row[key], later || null);
          }
          if (row[key].hidden === show) row[key].hidden = !show;
        }

        // The notes under the value, in this order, above the edit area; each made when first needed.
        const NOTES = ['problem', 'managed', 'large'];

        function setNote(row, kind, text) {
          if (!row[kind]) {
            if (!text) return;
            row[kind] = el('p', kind === 'managed' ? 'managed' : kind + ' warning');
            if (row.controlId) row[kind].id = row.controlId + '-' + kind;
            const later = NOTES.slice(NOTES.indexOf(kind) + 1).map((k) => row[k]).find(Boolean);
            row.el.insertBefore(row[kind], later || row.edit || null);
            describe(row);
          }
          row[kind].textContent = text || '';
          row[kind].hidden = !text;
        }

        // The control is described by the key's description, why it is managed or not editable, and its error.
        function describe(row) {
          if (!row.control) return;
          const notes = [row.managed, row.large].filter((note) => note && !note.hidden).map((note) => note.id);
          row.control.setAttribute('aria-describedby', [row.description.id, ...notes, row.error.id].join(' '));
        }

        function factsText(entry) {
          const type = entry.type ? (isReal(entry.type) ? 'real' : entry.type) : 'unknown';
          const facts = ['Type: ' + (entry.swiftType ? `${type} (${entry.swiftType})` : type)];
          if (entry.defaultText != null) facts.push('Default: ' + entry.defaultText);
          if (entry.allowed) facts.push('Allowed: ' + entry.allowed.summary);
          return facts.join(' · ');
        }

        function sourceText(entry) {
          switch (entry.source) {
            case null: case undefined: return 'not set anywhere';
            case 'default': return 'from the schema’s default';
            default: return entry.sourceFile ? `from ${entry.source}: ${entry.sourceFile}` : `from ${entry.source}`;
          }
        }

        // Shows `entry` in the row. keepInput: the person is typing, leave the control's value alone.
        // A row whose controls are not built yet keeps the entry for when they are.
        function fillRow(row, entry, keepInput = false) {
          row.entry = entry;
          row.haystack = (entry.name + '\n' + (entry.description || '')).toLowerCase();
          if (row.isModified !== !!entry.modified) {
            row.isModified = !!entry.modified;
            row.el.classList.toggle('is-modified', row.isModified);
          }
          if (row.isManaged !== !entry.writable) {
            row.isManaged = !entry.writable;
            row.el.classList.toggle('is-managed', row.isManaged);
          }
          setBadge(row, 'modified', !!entry.modified);
          if (entry.syncs || row.syncsBadge) setBadge(row, 'syncs', !!entry.syncs);
          if (!entry.writable || row.managedBadge) setBadge(row, 'managed', !entry.writable);

          row.description.textContent = entry.description ||
            (entry.inSchema ? 'No description.' : 'The schema does not declare this key.');
          row.facts.textContent = factsText(entry);
          row.currentValue.textContent = entry.value == null ? '(no value)' : entry.value;
          if (entry.value != null && entry.value.includes('\n')) row.currentValue.classList.add('multiline');
          else if (row.currentValue.className !== 'current-value') row.currentValue.classList.remove('multiline');
          row.sourceText.textContent = sourceText(entry);

          const managedBefore = row.managed && !row.managed.hidden;
          const largeBefore = row.large && !row.large.hidden;
          setNote(row, 'problem', entry.problem && 'Problem: ' + entry.problem);
          setNote(row, 'managed', !entry.writable &&
            'Cannot be changed here: ' + (entry.notWritableBecause || 'the key is not writable') + '.');
          setNote(row, 'large', entry.tooLargeToEdit &&
            'Too large to edit here; shown cut short. defaults write or defaults import change it.');
          if (managedBefore !== !entry.writable || largeBefore !== !!entry.tooLargeToEdit) describe(row);

          if (row.edit) fillControls(row, entry, keepInput);
          if (!keepInput) {
            row.pending = null;
            clearMessages(row);
          }
        }

        // The edit area shows `entry`.
        function fillControls(row, entry, keepInput) {
          if (row.resetIsDelete !== !entry.inSchema) {
            row.resetIsDelete = !entry.inSchema;
            row.resetButton.textContent = entry.inSchema ? 'Reset to default' : 'Delete';
            row.resetButton.setAttribute('aria-label', (entry.inSchema ? 'Reset to default: ' : 'Delete ') + row.name);
          }
          row.resetButton.hidden = !entry.modified;
          row.setButton.disabled = !entry.writable || !!entry.tooLargeToEdit;
          row.resetButton.disabled = !entry.writable;   // the server refuses a managed key's reset
          setControl(row, entry.tooLargeToEdit ? { ...entry, writable: false } : entry, keepInput);
        }

        function clearMessages(row) {
          if (!row.edit) return;
          if (row.error.firstChild) row.error.textContent = '';
          if (row.control) row.control.removeAttribute('aria-invalid');
          if (row.notice) { row.notice.remove(); row.notice = null; }
          if (row.conflict) { row.conflict.remove(); row.conflict = null; }
          row.el.classList.remove('is-edited');
        }

        // ---------------------------------------------------------------- controls

        function controlKind(entry) {
          if (entry.allowed && Array.isArray(entry.allowed.choices)) return 'choice';
          if (entry.type === 'boolean') return 'switch';
          if (entry.type === 'integer' || isReal(entry.type)) return 'number';
          if (entry.type === 'date') return 'date';
          if (entry.type === 'array' || entry.type === 'dictionary') return 'plist';
          return 'text';
        }

        // One control of each kind, cloned for each row (a typed input is costly to make).
        const controlPrototypes = {};

        function makeControl(kind, entry) {
          if (kind === 'choice') {
            const select = el('select', 'value-control');
            for (const choice of entry.allowed.choices) select.append(new Option(choice, choice));
            return select;
          }
          if (!controlPrototypes[kind]) {
            const control = el(kind === 'plist' ? 'textarea' : 'input', 'value-control');
            const types = { switch: 'checkbox', number: 'number', date: 'datetime-local', text: 'text' };
            if (types[kind]) control.type = types[kind];
            if (kind === 'switch') control.setAttribute('role', 'switch');
            if (kind === 'date' || kind === 'number') control.step = '1';   // dates show seconds; step is slow to set
            if (kind === 'text' || kind === 'plist') control.spellcheck = false;
            if (kind === 'text') control.autocomplete = 'off';
            controlPrototypes[kind] = control;
          }
          return controlPrototypes[kind].cloneNode(false);
        }

        function setControl(row, entry, keepInput) {
          const kind = controlKind(entry);
          const signature = kind + (kind === 'choice' ? JSON.stringify(entry.allowed.choices) : '');
          if (row.signature !== signature) {
            const old = row.control;
            const hadFocus = old && document.activeElement === old;
            if (old) old.remove();
            if (row.switchState) row.switchState.remove();
            row.control = makeControl(kind, entry);
            row.control.id = row.controlId;
            describe(row);
            row.kind = kind;
            row.signature = signature;
            row.switchState = kind === 'switch' ? el('span', 'switch-state') : null;
            row.label.after(row.control);
            if (row.switchState) {
              row.switchState.setAttribute('aria-hidden', 'true');   // the switch tells its state itself
              row.control.after(row.switchState);
            }
            row.setButton.hidden = kind === 'switch' || kind === 'choice';   // those apply on change
            keepInput = false;
            row.fresh = true;
            if (hadFocus) row.control.focus();
          }
          const control = row.control;
          if (kind === 'number') {
            const step = entry.type === 'integer' ? '1' : 'any';
            if (control.step !== step) control.step = step;
            setBound(control, 'min', entry.allowed && entry.allowed.lower);
            setBound(control, 'max', entry.allowed && entry.allowed.upper);
          } else if (kind === 'date') {
            setBound(control, 'min', entry.allowed && isoToLocalInput(entry.allowed.lower));
            setBound(control, 'max', entry.allowed && isoToLocalInput(entry.allowed.upper));
          }
          const locked = !entry.writable;
          if (kind === 'switch' || kind === 'choice') control.disabled = locked;
          else control.readOnly = locked;
          if (!keepInput) {
            writeControl(row, entry.editText);
            row.fresh = false;
            row.baseline = readControl(row);
          }
        }

        function setBound(control, attribute, value) {
          if (value) control.setAttribute(attribute, value);
          else control.removeAttribute(attribute);
        }

        // Puts `text` (editText form) into the control.
        function writeControl(row, text) {
          const control = row.control;
          // A control never typed into shows its default value, which is far cheaper to set.
          const property = row.fresh ? 'defaultValue' : 'value';
          switch (row.kind) {
            case 'switch':
              control.checked = text === 'true';
              control.setAttribute('aria-checked', String(control.checked));
              row.switchState.textContent = control.checked ? 'true' : 'false';
              break;
            case 'choice': {
              // A value the schema does not allow (or none) is still shown, as an extra option.
              for (const option of control.querySelectorAll('option.extra')) option.remove();
              const value = text == null ? '' : text;
              if (![...control.options].some((option) => option.value === value)) {
                const option = new Option(text == null ? '(no value)' : `${text} (not allowed)`, value);
                option.className = 'extra';
                control.prepend(option);
              }
              control.value = value;
              break;
            }
            case 'date': {
              const local = isoToLocalInput(text);
              const step = /\.\d{3}$/.test(local) ? '0.001' : '1';
              if (control.step !== step) control.step = step;
              control[property] = local;
              break;
            }
            case 'plist':
              control[property] = text == null ? '' : text;
              control.rows = Math.min(16, Math.max(3, control.value.split('\n').length + 1));
              break;
            default:
              control[property] = text == null ? '' : text;
          }
        }

        // The text the control would send (editText form).
        function readControl(row) {
          switch (row.kind) {
            case 'switch': return row.control.checked ? 'true' : 'false';
            case 'date': return localInputToIso(row.control.value);
            default: return row.control.value;
          }
        }

        function isEditing(row) {
          if (!row.control) return false;
          return document.activeElement === row.control || readControl(row) !== row.baseline;
        }

        // ---------------------------------------------------------------- writing

        function showError(row, message) {
          materialize(row);
          row.error.textContent = '';
          row.error.textContent = message;
          row.control.setAttribute('aria-invalid', 'true');
        }

        function applyRow(row) {
          materialize(row);
          if (!row.entry.writable || row.busy) return;
          if (row.kind === 'number' && row.control.validity.badInput) {
            showError(row, 'Enter a number.');
            return;
          }
          write(row, readControl(row), false);
        }

        async function write(row, text, force) {
          materialize(row);
          const entry = row.entry;
          const body = { key: row.name, text, expected: entry.fingerprint ?? null, force };
          if (force && row.conflictEntry) body.expected = row.conflictEntry.fingerprint ?? null;
          if (!entry.inSchema) body.type = entry.type || 'string';
          row.busy = true;
          row.el.setAttribute('aria-busy', 'true');
          const { status, data } = await request('POST', 'api/write', body);
          row.busy = false;
          row.el.removeAttribute('aria-busy');
          if (status === 200 && data.entry) {
            // The conflict's buttons go with it; focus is not to fall to the page's start.
            const focusInConflict = row.conflict && row.conflict.contains(document.activeElement);
            fillRow(row, data.entry);
            if (focusInConflict) row.control.focus();
            refreshVisibility(row);
            announce(`${row.name} is now ${short(data.entry.value)}.`);
          } else if (status === 409 && data.entry) {
            showConflict(row, data.entry, text, errorText(data, status));
          } else {
            showError(row, errorText(data, status));
            // A switch or menu shows what it applied; it was not applied.
            if (row.kind === 'switch' || row.kind === 'choice') writeControl(row, row.baseline);
          }
          takeLateChange(row);
        }

        // A live change that came while a write was on its way: now that the write is answered, it is
        // either the write itself (nothing to do) or someone else's.
        function takeLateChange(row) {
          const late = row.late;
          row.late = null;
          if (late && state.rows.get(row.name) === row && !sameEntry(late, row.entry)) receive(late);
        }

        function showConflict(row, current, text, message) {
          materialize(row);
          row.conflictEntry = current;
          row.conflictText = text;
          if (row.conflict) row.conflict.remove();
          if (row.notice) { row.notice.remove(); row.notice = null; }   // the question supersedes it
          row.pending = null;
          const box = el('div', 'conflict');
          box.setAttribute('role', 'alert');
          const value = current.value == null ? '(no value)' : current.value;
          box.append(el('p', null, message), el('p', null, 'Its value now:'), el('pre', 'conflict-value', value),
            el('p', 'conflict-question', `Overwrite it with yours (${text}), or keep theirs?`));
          const buttons = el('div', 'buttons');
          buttons.append(button('overwrite', 'Overwrite', 'Overwrite ' + row.name),
            button('keep-theirs', 'Keep theirs', 'Keep their value of ' + row.name));
          box.append(buttons);
          row.conflict = box;
          row.error.after(box);
        }

        function showNotice(row, entry) {
          materialize(row);
          if (row.notice) row.notice.remove();
          const notice = el('div', 'notice');
          notice.setAttribute('role', 'status');
          const value = entry.value == null ? 'no value' : entry.value;
          notice.append(el('span', null, 'Changed elsewhere to '), el('code', null, value), '. ',
            button('take-new', 'Use it', 'Use the new value of ' + row.name));
          row.notice = notice;
          row.error.after(notice);
        }

        async function resetRow(row) {
          materialize(row);
          if (row.busy) return;
          row.busy = true;
          row.el.setAttribute('aria-busy', 'true');
          const expected = row.entry.fingerprint ?? null;
          const { status, data } = await request('POST', 'api/reset', { key: row.name, expected });
          row.busy = false;
          row.el.removeAttribute('aria-busy');
          if (status !== 200) {
            // Changed elsewhere since it was shown: show what it is now, and let the person decide.
            if (status === 409 && data && data.entry) fillRow(row, data.entry);
            showError(row, errorText(data, status));
            return;
          }
          if (!data.entry) {
            focusAfterRemoval(row);
            removeRow(row);
            announce(`${row.name} was deleted.`);
          } else {
            fillRow(row, data.entry);
            // The button that had focus is hidden now; the control is the natural next stop.
            (row.entry.writable ? row.control : row.el).focus();
            refreshVisibility(row);
            announce(`${row.name} reads ${short(data.entry.value)} again.`);
          }
          takeLateChange(row);
        }

        // ---------------------------------------------------------------- explain

        // The disclosure under the row, made on first use; read afresh each time it opens.
        function toggleExplain(row) {
          materialize(row);
          const open = row.explainButton.getAttribute('aria-expanded') !== 'true';
          if (!row.explainBody) {
            row.explainBody = el('div', 'explain-body');
            row.explainBody.id = row.controlId + '-explain';
            row.explainButton.setAttribute('aria-controls', row.explainBody.id);
            row.el.append(row.explainBody);
          }
          row.explainButton.setAttribute('aria-expanded', String(open));
          row.explainBody.hidden = !open;
          if (open) explainRow(row);
        }

        async function explainRow(row) {
          const body = row.explainBody;
          body.replaceChildren(el('p', 'hint', 'Loading…'));
          const { status, data } = await request('GET', 'api/explain?key=' + encodeURIComponent(row.name));
          if (status !== 200) {
            body.replaceChildren(el('p', 'error', errorText(data, status)));
            return;
          }
          body.replaceChildren(explanation(data));
        }

        function explanation(data) {
          const fragment = document.createDocumentFragment();
          const layers = Array.isArray(data.layers) ? data.layers : [];
          if (!layers.length) {
            fragment.append(el('p', null, 'No layer holds this key and the schema gives it no default.'));
          } else {
            const table = el('table', 'layers');
            table.append(el('caption', null, 'Layers, lowest precedence first; * marks the one a program reads'));
            const head = el('tr');
            for (const title of ['Read', 'Layer', 'File', 'Value', 'Note']) {
              const cell = el('th', null, title);
              cell.scope = 'col';
              head.append(cell);
            }
            table.append(el('thead'), el('tbody'));
            table.tHead.append(head);
            for (const layer of layers) table.tBodies[0].append(layerRow(layer));
            fragment.append(table);
          }
          if (data.writable === false) {
            fragment.append(el('p', 'explain-managed', data.notWritableBecause || 'Not writable.'));
          }
          for (const problem of data.problems || []) fragment.append(el('p', 'warning', problem));
          return fragment;
        }

        function layerRow(layer) {
          const tr = el('tr');
          if (layer.isRead) tr.className = 'is-read';
          const read = el('td', 'read-mark');
          if (layer.isRead) read.append(el('span', null, '*'), el('span', 'vh', ' read'));
          let file = layer.file || '';
          if (layer.line != null) file += ':' + layer.line;
          else if (layer.binary) file += ' (binary)';
          const notes = [];
          if (layer.ignored) notes.push('ignored: ' + layer.ignored);
          if (layer.problem) notes.push(layer.problem);
          if (layer.sync) {
            const sync = layer.sync;
            notes.push(`sync: ${sync.pending ? 'to be pushed' : 'as synced'}` +
              (sync.writtenAt ? `, written ${sync.writtenAt}` : '') +
              (sync.setAside ? `, set aside: ${sync.setAside}` : ''));
          }
          const value = el('td');
          value.append(el('pre', 'layer-text', layer.text == null ? '' : layer.text));
          tr.append(read, el('td', null, layer.layer), el('td', 'path', file), value, el('td', null, notes.join('; ')));
          return tr;
        }

        // ---------------------------------------------------------------- copying

        async function copy(text, what) {
          try {
            await navigator.clipboard.writeText(text);
            announce(`Copied ${what}.`);
          } catch (error) {
            // No clipboard (an insecure context, a refusal): nothing to do.
          }
        }

        // ---------------------------------------------------------------- adding, removing rows

        function insertRow(entry) {
          const section = entry.inSchema ? state.sections.schema : state.sections.extra;
          let container = section.list;
          let group = null;
          if (section.grouped) {
            group = section.groups.get(prefixOf(entry.name)) || section.groups.get(OTHER);
            if (!group) {
              group = buildGroup(section, OTHER);
              section.list.append(group.el);
            }
            container = group.list;
          }
          const row = createRow(entry, section, group);
          // Keep the name order the server gives.
          const next = [...container.children].find((child) => child.dataset.key > entry.name);
          container.insertBefore(row.el, next || null);
          refreshVisibility(row);
          return row;
        }

        function removeRow(row) {
          if (nearObserver) nearObserver.unobserve(row.el);
          row.el.remove();
          state.rows.delete(row.name);
          if (row.group) {
            row.group.rows.delete(row);
            if (!row.group.rows.size) {
              row.group.el.remove();
              row.section.groups.delete(row.group.prefix);
            }
          }
          scheduleCounts();
        }

        // Before a row goes: focus would fall to the page's start, so move it to a neighbour.
        function focusAfterRemoval(row) {
          if (!row.el.contains(document.activeElement)) return;
          const rows = [...row.section.el.querySelectorAll('.key-row:not([hidden])')];
          const index = rows.indexOf(row.el);
          const next = rows[index + 1] || rows[index - 1];
          (next || row.section.el.querySelector('h2')).focus();
        }

        // ---------------------------------------------------------------- filtering

        function matches(row) {
          if (state.onlyModified && !row.entry.modified) return false;
          return !state.query || row.haystack.includes(state.query);
        }

        function applyFilter() {
          state.query = $('search').value.trim().toLowerCase();
          state.onlyModified = $('only-modified').checked;
          for (const row of state.rows.values()) {
            const hide = !matches(row);
            if (row.el.hidden !== hide) row.el.hidden = hide;
          }
          updateCounts();
        }

        // After a row's entry changed; a row holding focus stays, so that nothing vanishes under the person.
        function refreshVisibility(row) {
          const hide = !matches(row) && !row.el.contains(document.activeElement);
          if (row.el.hidden !== hide) row.el.hidden = hide;
          scheduleCounts();
        }

        // Counting walks every row: many row changes in one task count once, at its end.
        function scheduleCounts() {
          if (state.countsQueued) return;
          state.countsQueued = true;
          queueMicrotask(() => {
            state.countsQueued = false;
            updateCounts();
          });
        }

        function updateCounts() {
          let shown = 0;
          for (const row of state.rows.values()) if (!row.el.hidden) shown += 1;
          const total = state.rows.size;
          const text = `${shown} of ${total} ${total === 1 ? 'key' : 'keys'}`;
          const count = $('shown-count');
          if (count.textContent !== text) count.textContent = text;
          for (const section of Object.values(state.sections)) {
            for (const group of section.groups.values()) {
              const hide = ![...group.rows].some((row) => !row.el.hidden);
              if (group.el.hidden !== hide) group.el.hidden = hide;
            }
            section.empty.hidden = section.list.childElementCount > 0;
          }
        }

        function clearFilter() {
          $('search').value = '';
          $('only-modified').checked = false;
          applyFilter();
        }

        // ---------------------------------------------------------------- the address's #key

        function hashKey() {
          const raw = location.hash.slice(1);
          try { return decodeURIComponent(raw); } catch (error) { return raw; }
        }

        function goToHash() {
          const row = state.rows.get(hashKey());
          if (!row) return;
          if (row.el.hidden) clearFilter();
          materialize(row);
          row.el.scrollIntoView({ block: 'start' });
          row.el.focus({ preventScroll: true });
        }

        // ---------------------------------------------------------------- live updates

        // An entry from elsewhere (an event, a fresh snapshot).
        function receive(entry) {
          const row = state.rows.get(entry.name);
          if (!row) {
            insertRow(entry);
            return;
          }
          if (row.busy) { row.late = entry; return; }      // judged when the write is answered
          if (sameEntry(row.entry, entry)) {
            // Changed and changed back: nothing waits any more.
            if (row.pending) { row.pending = null; if (row.notice) row.notice.remove(); row.notice = null; }
            return;
          }
          if (isEditing(row)) {
            const sameValue = entry.editText === row.entry.editText && entry.fingerprint === row.entry.fingerprint;
            if (sameValue) {
              fillRow(row, entry, true);
            } else {
              // Keep the person's typing, and the fingerprint they started from: their Set asks first.
              row.pending = entry;
              showNotice(row, entry);
            }
            return;
          }
          fillRow(row, entry);
          refreshVisibility(row);
        }

        function receiveRemoval(name) {
          const row = state.rows.get(name);
          // A row with a request on its way is settled by the answer (its own Delete, most likely).
          if (!row || row.entry.inSchema || row.busy) return;
          focusAfterRemoval(row);
          removeRow(row);
          if (!state.resettingAll) announce(`${name} was removed elsewhere.`);
        }

        function onChange(event) {
          let data;
          try { data = JSON.parse(event.data); } catch (error) { return; }
          state.eventCount += 1;
          for (const entry of data.entries || []) {
            state.queued.set(entry.name, entry);
            state.queuedRemovals.delete(entry.name);
            state.touched.set(entry.name, state.eventCount);
          }
          for (const name of data.removed || []) {
            state.queued.delete(name);
            state.queuedRemovals.add(name);
            state.touched.set(name, state.eventCount);
          }
          // Many changes at once are applied together, in one frame.
          if (!state.frame) state.frame = requestAnimationFrame(flushChanges);
        }

        function flushChanges() {
          state.frame = 0;
          const entries = [...state.queued.values()];
          const removals = [...state.queuedRemovals];
          state.queued.clear();
          state.queuedRemovals.clear();
          for (const entry of entries) receive(entry);
          for (const name of removals) receiveRemoval(name);
          updateCounts();
        }

        // A whole snapshot (after reconnecting, after "Reset all"). Keys a live change touched since
        // `since` are newer than the snapshot and kept.
        function applySnapshot(domain, since) {
          renderHeader(domain);
          const seen = new Set();
          for (const entry of domain.keys || []) {
            seen.add(entry.name);
            if ((state.touched.get(entry.name) || 0) <= since) receive(entry);
          }
          for (const row of [...state.rows.values()]) {
            if (!seen.has(row.name) && !row.entry.inSchema && (state.touched.get(row.name) || 0) <= since) {
              focusAfterRemoval(row);
              removeRow(row);
            }
          }
          updateCounts();
        }

        async function resync() {
          const since = state.eventCount;
          const { status, data } = await request('GET', 'api/domain');
          if (status === 200) applySnapshot(data, since);
        }

        function setLive(text, stateName) {
          const live = $('live-status');
          if (live.textContent !== text) live.textContent = text;
          live.dataset.state = stateName;
        }

        function connect() {
          if (typeof EventSource !== 'function') {
            setLive('no live updates', 'off');
            return;
          }
          const events = new EventSource('api/events');
          events.addEventListener('change', onChange);
          events.addEventListener('open', () => {
            setLive('live', 'live');
            // Whatever changed while no stream was open (or before the first one) is read again.
            resync();
          });
          events.addEventListener('error', () => {
            if (events.readyState === EventSource.CLOSED) {
              // The browser gave up (the server answered with an error): try again a little later.
              setLive('reconnecting', 'reconnecting');
              events.close();
              setTimeout(connect, 5000);
            } else {
              setLive('reconnecting', 'reconnecting');
            }
          });
        }

        // ---------------------------------------------------------------- events on the rows

        function rowOf(node) {
          const element = node.closest && node.closest('.key-row');
          return element ? state.rows.get(element.dataset.key) : null;
        }

        function onRowsClick(event) {
          const target = event.target.closest('button');
          if (!target) return;
          const row = rowOf(target);
          if (!row) return;
          if (target.classList.contains('set')) applyRow(row);
          else if (target.classList.contains('reset')) resetRow(row);
          else if (target.classList.contains('overwrite')) write(row, row.conflictText, true);
          else if (target.classList.contains('keep-theirs')) {
            fillRow(row, row.conflictEntry);
            row.control.focus();
            refreshVisibility(row);
            announce(`Kept the other value of ${row.name}.`);
          } else if (target.classList.contains('take-new')) {
            fillRow(row, row.pending || row.entry);
            row.control.focus();
          } else if (target.classList.contains('explain')) toggleExplain(row);
          else if (target.classList.contains('copy-name')) copy(row.name, 'the name');
          else if (target.classList.contains('copy-value')) copy(row.entry.value ?? '', 'the value');
        }

        function onRowsChange(event) {
          const row = event.target.classList.contains('value-control') && rowOf(event.target);
          if (!row) return;
          if (row.kind === 'switch') {
            row.control.setAttribute('aria-checked', String(row.control.checked));
            row.switchState.textContent = row.control.checked ? 'true' : 'false';
          }
          if (row.kind === 'switch' || row.kind === 'choice') applyRow(row);
        }

        function onRowsInput(event) {
          const row = event.target.classList.contains('value-control') && rowOf(event.target);
          if (row) row.el.classList.toggle('is-edited', readControl(row) !== row.baseline);
        }

        function onRowsKeydown(event) {
          if (event.key !== 'Enter' || event.isComposing) return;
          const row = event.target.classList.contains('value-control') && rowOf(event.target);
          if (!row || row.kind === 'switch' || row.kind === 'choice') return;
          // Enter sets a one-line value; in a property list, Enter is a new line and Ctrl+Enter sets.
          if (row.kind === 'plist' && !(event.ctrlKey || event.metaKey)) return;
          event.preventDefault();
          applyRow(row);
        }

        // Leaving a control that was not changed: a change that waited for it can be shown now.
        function onRowsFocusout(event) {
          const row = event.target.classList.contains('value-control') && rowOf(event.target);
          if (!row || !row.pending) return;
          setTimeout(() => {
            if (row.pending && !isEditing(row) && state.rows.get(row.name) === row) {
              fillRow(row, row.pending);
              refreshVisibility(row);
            }
          }, 0);
        }

        // ---------------------------------------------------------------- reset all

        function openResetAll() {
          const dialog = $('reset-all-dialog');
          $('reset-all-error').textContent = '';
          if (typeof dialog.showModal === 'function') dialog.showModal();
          else dialog.setAttribute('open', '');
          $('cancel-reset-all').focus();
        }

        function closeResetAll() {
          const dialog = $('reset-all-dialog');
          if (typeof dialog.close === 'function') dialog.close();
          else dialog.removeAttribute('open');
          $('reset-all').focus();
        }

        async function confirmResetAll() {
          const since = state.eventCount;
          const confirmButton = $('confirm-reset-all');
          confirmButton.disabled = true;
          state.resettingAll = true;
          const { status, data } = await request('POST', 'api/reset', { all: true });
          state.resettingAll = false;
          confirmButton.disabled = false;
          if (status !== 200 || !data.domain) {
            $('reset-all-error').textContent = errorText(data, status);
            return;
          }
          closeResetAll();
          applySnapshot(data.domain, since);
          announce('Every value in your file was removed.');
        }

        // ---------------------------------------------------------------- add a key

        const TYPE_HINTS = {
          string: 'Any text.',
          integer: 'A whole number, such as 42.',
          float: 'A number, such as 0.5.',
          boolean: 'true or false.',
          date: 'ISO 8601, such as 2024-05-06T07:08:09Z.',
          data: 'Hexadecimal bytes, such as 0a1bff.',
          array: 'Property-list text, such as (one, two), or XML: <array>…</array>. Ctrl+Enter adds.',
          dictionary: 'Property-list text, such as { size = 12; }, or XML: <dict>…</dict>. Ctrl+Enter adds.',
        };

        function isCollection(type) {
          return type === 'array' || type === 'dictionary';
        }

        function updateAddHint() {
          const type = $('add-type').value;
          $('add-hint').textContent = TYPE_HINTS[type] || '';
          $('add-value').rows = isCollection(type) ? 4 : 1;
        }

        async function addKey(event) {
          event.preventDefault();
          const name = $('add-name').value.trim();
          const type = $('add-type').value;
          const error = $('add-error');
          error.textContent = '';
          if (!name) {
            error.textContent = 'Give the key a name.';
            $('add-name').focus();
            return;
          }
          if (state.rows.has(name)) {
            error.textContent = `${name} exists already: change it in its row.`;
            return;
          }
          const body = { key: name, text: $('add-value').value, type, expected: null, force: false };
          const { status, data } = await request('POST', 'api/write', body);
          if (status !== 200 || !data.entry) {
            error.textContent = status === 409 ?
              `${name} was just created elsewhere; it is shown above.` : errorText(data, status);
            if (status === 409 && data.entry) receive(data.entry);
            return;
          }
          receive(data.entry);
          $('add-name').value = '';
          $('add-value').value = '';
          $('add-name').focus();
          announce(`Added ${name}.`);
        }

        function onAddKeydown(event) {
          // One-line types: Enter adds; collections take Ctrl+Enter, Enter being a new line.
          if (event.key !== 'Enter' || event.isComposing) return;
          if (isCollection($('add-type').value) && !(event.ctrlKey || event.metaKey)) return;
          event.preventDefault();
          $('add-key').requestSubmit();
        }

        // ---------------------------------------------------------------- start

        function wirePage() {
          for (const [key, id] of [['schema', 'schema-section'], ['extra', 'extra-section']]) {
            const section = $(id);
            state.sections[key] = {
              el: section, list: section.querySelector('.rows'), empty: section.querySelector('.empty-note'),
              grouped: false, groups: new Map(),
            };
          }
          const main = $('keys');
          main.addEventListener('click', onRowsClick);
          main.addEventListener('change', onRowsChange);
          main.addEventListener('input', onRowsInput);
          main.addEventListener('keydown', onRowsKeydown);
          main.addEventListener('focusout', onRowsFocusout);
          main.addEventListener('focusin', onRowsFocusin);

          $('search').addEventListener('input', applyFilter);
          $('only-modified').addEventListener('change', applyFilter);
          $('reset-all').addEventListener('click', openResetAll);
          $('cancel-reset-all').addEventListener('click', closeResetAll);
          $('confirm-reset-all').addEventListener('click', confirmResetAll);
          $('add-key').addEventListener('submit', addKey);
          $('add-value').addEventListener('keydown', onAddKeydown);
          $('add-type').addEventListener('change', updateAddHint);
          updateAddHint();
          window.addEventListener('hashchange', goToHash);
          window.addEventListener('scroll', onScroll, { passive: true });

          // "/" goes to the search box, as in many lists; not while typing somewhere.
          document.addEventListener('keydown', (event) => {
            if (event.key !== '/' || event.ctrlKey || event.metaKey || event.altKey) return;
            const target = event.target;
            if (target.closest && target.closest('input, textarea, select, [contenteditable]')) return;
            event.preventDefault();
            $('search').focus();
          });

          // The toolbar sticks to the top; rows scrolled to must not hide beneath it.
          const toolbar = $('toolbar');
          const setOffset = () =>
            document.documentElement.style.setProperty('--toolbar-height', toolbar.offsetHeight + 'px');
          if (typeof ResizeObserver === 'function') new ResizeObserver(setOffset).observe(toolbar);
          setOffset();
        }

        let wired = false;
        async function start() {
          if (!wired) wirePage();
          wired = true;
          const { status, data } = await request('GET', 'api/domain');
          if (status !== 200 || !data || !Array.isArray(data.keys)) {
            $('schema-info').textContent = '';
            const problem = $('schema-problem');
            problem.textContent = 'The domain could not be read: ' + errorText(data, status);
            problem.hidden = false;
            document.body.dataset.ready = 'error';
            setTimeout(start, 5000);
            return;
          }
          $('schema-problem').hidden = true;
          renderDomain(data);
          performance.mark('keys-shown');
          document.body.dataset.ready = 'true';
          goToHash();
          connect();
        }

        start();
        """#
}
