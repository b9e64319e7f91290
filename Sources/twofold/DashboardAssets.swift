// The dashboard page's markup, script and style: static files; the script renders the model's
// snapshot (`GET /api/state`) with DOM calls (never markup from data) and posts the person's
// intents. Strict CSP: no inline script or style.

extension DashboardPage {
    static let html = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Twofold testing dashboard</title>
        <link rel="stylesheet" href="/dashboard.css">
        <script src="/dashboard.js" defer></script>
        </head>
        <body>
        <header><h1>Twofold testing dashboard</h1>
        <p>A virtual phone against the server: seed 004's device status, test actions, scenarios and results log.</p>
        <p id="running" role="status" aria-live="polite"></p>
        <p><button type="button" id="stop" hidden>Stop</button></p>
        <p id="no-key" class="failed" role="alert" hidden>This page has no key for this dashboard. The link
        <code>twofold dashboard</code> prints works once, in the first page that opens it: restart
        <code>twofold dashboard</code> and open the new link.</p></header>
        <main>
        <section aria-labelledby="status-title"><h2 id="status-title">Device status</h2>
        <ul id="status" class="status"></ul></section>

        <section aria-labelledby="switches-title"><h2 id="switches-title">The phone's switches</h2>
        <div class="switches">
        <label><input type="checkbox" id="sw-secureHardware" data-switch="secureHardware"> Secure Enclave</label>
        <label>Biometry <select id="sw-biometry" data-switch="biometry">
        <option value="faceID">Face ID</option><option value="touchID">Touch ID</option><option value="none">None</option>
        </select></label>
        <label><input type="checkbox" id="sw-biometryEnrolled" data-switch="biometryEnrolled"> Biometrics enrolled</label>
        <label><input type="checkbox" id="sw-passcode" data-switch="passcode"> Passcode set</label>
        <label><input type="checkbox" id="sw-lockout" data-switch="lockout"> Biometrics locked out</label>
        <button type="button" id="sw-cancelNextPrompt" data-switch="cancelNextPrompt">Decline the next prompt</button>
        </div></section>

        <section aria-labelledby="actions-title"><h2 id="actions-title">Test actions</h2>
        <div class="actions" id="actions">
        <button type="button" data-action="enrollBiometric">Enroll with Biometrics</button>
        <button type="button" data-action="enrollPasscode">Enroll with Passcode Only</button>
        <button type="button" data-action="testAuthentication">Test Authentication</button>
        <button type="button" data-action="reEnroll">Re-enroll</button>
        <button type="button" data-action="unenroll">Unenroll</button>
        <button type="button" data-action="simulateBiometricDecline">Simulate Biometric Decline</button>
        <button type="button" data-action="switchToSMSFallback">Switch to SMS Fallback</button>
        <button type="button" data-action="checkDeviceSecurity">Check Device Security Status</button>
        </div></section>

        <section aria-labelledby="code-title" id="code-section" hidden><h2 id="code-title">A code is awaited</h2>
        <form id="code-form"><label for="code" id="code-label">Code sent to the phone</label>
        <input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="6" pattern="[0-9]{6}" required>
        <button type="submit">Send the code</button></form></section>

        <section aria-labelledby="scenarios-title"><h2 id="scenarios-title">Seed 004's scenarios</h2>
        <p><button type="button" id="run-all">Run all ten</button></p>
        <table><caption>Each runs on a phone of its own, set as its seed text describes.</caption>
        <thead><tr><th scope="col">#</th><th scope="col">Scenario</th><th scope="col">Result</th><th scope="col">Run</th></tr></thead>
        <tbody id="scenarios"></tbody></table></section>

        <section aria-labelledby="log-title"><h2 id="log-title">Results log</h2>
        <ol id="log" class="log" aria-live="polite"></ol></section>
        </main>
        </body>
        </html>
        """

    static let script = """
        "use strict";
        (function () {
          // The printed link's fragment (which no request carries) holds a startup key that
          // works once: this page trades it for the dashboard's key, which the tab keeps (so a
          // reload works), and the address bar loses the link's.
          const keyName = "twofold-dashboard-key";
          let key = window.sessionStorage.getItem(keyName) || "";
          const startup = new URLSearchParams(window.location.hash.slice(1)).get("t");
          if (startup) { window.history.replaceState(null, "", window.location.pathname); }
          let busy = false;
          let refusedKey = false;
          let lastLogID = -1;

          // The key refused (another tab has it, or the dashboard was restarted): say so, and
          // offer nothing that cannot work.
          function refused() {
            refusedKey = true;
            window.sessionStorage.removeItem(keyName);
            document.getElementById("no-key").hidden = false;
            document.getElementById("running").textContent = "";
            for (const control of document.querySelectorAll("button, input, select")) { control.disabled = true; }
          }

          function call(path, init) {
            if (refusedKey) { return Promise.resolve(null); }
            const request = init || {};
            request.headers = Object.assign({ "X-Dashboard-Token": key }, request.headers || {});
            return fetch(path, request).then((answer) => {
              if (answer.status === 403) { refused(); return null; }
              return answer.ok ? answer.json().catch(() => null) : null;
            });
          }

          function post(path, fields) {
            return call(path, {
              method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(fields)
            }).then(refresh);
          }

          function begin() {
            if (!startup) {
              if (!key) { refused(); }
              return Promise.resolve();
            }
            return fetch("/api/session", { method: "POST", headers: { "X-Dashboard-Token": startup } })
              .then((answer) => answer.ok ? answer.json() : null)
              .then((answer) => {
                if (answer && answer.key) {
                  key = answer.key;
                  window.sessionStorage.setItem(keyName, key);
                } else if (!key) {
                  refused();
                }
              });
          }

          function el(tag, text, className) {
            const node = document.createElement(tag);
            if (text !== undefined && text !== null) { node.textContent = text; }
            if (className) { node.className = className; }
            return node;
          }

          function mark(ok) { return ok ? "\\u2705 Yes \\u2014 " : "\\u274C No \\u2014 "; }

          function renderStatus(state) {
            const list = document.getElementById("status");
            list.replaceChildren();
            const s = state.status;
            if (!s) { return; }
            const c = s.capabilities;
            const biometry = c.biometry === "faceID" ? "Face ID" : c.biometry === "touchID" ? "Touch ID" : "none";
            const rows = [
              [c.secureHardware, "Secure Enclave available" + (c.secureHardware ? "" : " (keys in the Keychain)"), "secure"],
              [c.biometryEnrolled, "Biometrics enrolled (" + biometry + ")", "biometrics"],
              [c.passcodeSet, "Passcode set", "passcode"],
              [s.hasKey, "Enrolled: " + (s.hasKey ? "a key on this phone" : "no key on this phone"), "enrolled"],
              [!!s.method, "Current MFA method: " + (s.method || "none") + (s.username ? " (" + s.username + ")" : ""), "method"]
            ];
            for (const [ok, text, id] of rows) {
              const item = el("li", mark(ok) + text);
              item.id = "status-" + id;
              item.dataset.ok = ok ? "true" : "false";
              list.append(item);
            }
            if (state.scenarioPhone) {
              const p = state.scenarioPhone;
              list.append(el("li", "Scenario " + state.scenarioPhoneOf + "'s phone: biometry " + p.biometry +
                (p.biometryEnrolled ? " enrolled" : " not enrolled") + ", passcode " + (p.passcodeSet ? "set" : "not set")));
            }
          }

          function renderSwitches(state) {
            const sw = state.switches;
            if (!sw) { return; }
            const c = sw.capabilities;
            const set = (id, value) => { const node = document.getElementById(id); if (document.activeElement !== node) { node.checked = value; } };
            set("sw-secureHardware", c.secureHardware);
            set("sw-biometryEnrolled", c.biometryEnrolled);
            set("sw-passcode", c.passcodeSet);
            set("sw-lockout", sw.lockedOut);
            const select = document.getElementById("sw-biometry");
            if (document.activeElement !== select) { select.value = c.biometry; }
            document.getElementById("sw-cancelNextPrompt").setAttribute("aria-pressed", sw.cancelsNextPrompt ? "true" : "false");
          }

          function renderScenarios(state) {
            const body = document.getElementById("scenarios");
            if (body.children.length !== state.scenarios.length) {
              body.replaceChildren();
              for (const row of state.scenarios) {
                const tr = el("tr");
                tr.append(el("td", String(row.number)), el("td", row.name));
                const result = el("td", "", "result");
                result.id = "scenario-" + row.number + "-result";
                const run = el("button", "Run " + row.number);
                run.type = "button";
                run.dataset.scenario = String(row.number);
                run.setAttribute("aria-label", "Run scenario " + row.number + ": " + row.name);
                const cell = el("td");
                cell.append(run);
                tr.append(result, cell);
                body.append(tr);
              }
            }
            for (const row of state.scenarios) {
              const cell = document.getElementById("scenario-" + row.number + "-result");
              cell.textContent = row.result || "not run";
              cell.dataset.result = row.result || "";
            }
          }

          function renderLog(state) {
            const list = document.getElementById("log");
            for (const entry of state.log) {
              // The server keeps the newest entries only: new ones are those past the last shown.
              if (entry.id <= lastLogID) { continue; }
              lastLogID = entry.id;
              const item = el("li", null, entry.outcome.startsWith("FAILED") ? "failed" : "");
              const time = el("time", new Date(entry.at).toLocaleTimeString());
              time.dateTime = entry.at;
              item.append(time, el("span", " [" + entry.source + "] ", "source"), el("strong", entry.action),
                el("span", ": " + entry.outcome));
              if (entry.reason) { item.append(el("span", " \\u2014 " + entry.reason, "reason")); }
              list.append(item);
            }
            while (list.children.length > 1000) { list.firstElementChild.remove(); }
          }

          function render(state) {
            busy = !!state.running;
            document.getElementById("running").textContent = state.running ? "Running: " + state.running : "Ready.";
            document.getElementById("stop").hidden = !busy;
            for (const button of document.querySelectorAll("button[data-action], button[data-scenario], #run-all")) {
              button.disabled = busy;
            }
            const code = document.getElementById("code-section");
            code.hidden = !state.awaitingCode;
            if (state.awaitingCode) {
              document.getElementById("code-label").textContent = "Code sent to " + state.awaitingCode;
            }
            renderStatus(state);
            renderSwitches(state);
            renderScenarios(state);
            renderLog(state);
          }

          function refresh() {
            return call("/api/state").then((state) => { if (state) { render(state); } });
          }

          document.addEventListener("click", (event) => {
            const target = event.target.closest("button");
            if (!target) { return; }
            if (target.dataset.action) { post("/api/action", { action: target.dataset.action }); }
            if (target.dataset.scenario) { post("/api/scenario", { number: target.dataset.scenario }); }
            if (target.id === "run-all") { post("/api/scenario", { number: "all" }); }
            if (target.id === "stop") { post("/api/stop", {}); }
            if (target.dataset.switch === "cancelNextPrompt") { post("/api/switch", { name: "cancelNextPrompt", value: "true" }); }
          });
          document.addEventListener("change", (event) => {
            const target = event.target;
            if (!target.dataset || !target.dataset.switch) { return; }
            const value = target.type === "checkbox" ? String(target.checked) : target.value;
            post("/api/switch", { name: target.dataset.switch, value: value });
          });
          document.getElementById("code-form").addEventListener("submit", (event) => {
            event.preventDefault();
            const field = document.getElementById("code");
            post("/api/code", { code: field.value.replace(/\\D/g, "") });
            field.value = "";
          });
          begin().then(() => {
            if (refusedKey) { return; }
            refresh();
            setInterval(() => { if (!refusedKey) { refresh(); } }, 700);
          });
        })();
        """

    static let style = """
        :root { color-scheme: light; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; }
        body { margin: 0 auto; max-width: 60rem; padding: 1rem; color: #1a1a1a; background: #fff; line-height: 1.45; }
        h1 { font-size: 1.5rem; margin: 0.5rem 0; }
        h2 { font-size: 1.15rem; margin: 1.5rem 0 0.5rem; }
        section { border-top: 1px solid #ccc; }
        ul.status { list-style: none; padding: 0; }
        ul.status li { padding: 0.2rem 0; }
        .switches, .actions { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: center; }
        button { font: inherit; padding: 0.45rem 0.8rem; border: 1px solid #0b4f9c; border-radius: 0.4rem;
          background: #0b5cad; color: #fff; cursor: pointer; min-height: 2.75rem; }
        button:disabled { background: #5f6b7a; border-color: #5f6b7a; cursor: not-allowed; }
        button:focus-visible, input:focus-visible, select:focus-visible { outline: 3px solid #f5a623; outline-offset: 2px; }
        input, select { font: inherit; padding: 0.3rem; }
        input[type=checkbox] { width: 1.2rem; height: 1.2rem; }
        table { border-collapse: collapse; width: 100%; }
        caption { text-align: left; color: #444; padding-bottom: 0.3rem; }
        th, td { text-align: left; padding: 0.3rem 0.5rem; border-bottom: 1px solid #ddd; }
        td.result[data-result=passed] { color: #0a6b2c; font-weight: bold; }
        td.result[data-result=failed] { color: #a4161a; font-weight: bold; }
        ol.log { padding-left: 1.5rem; font-size: 0.92rem; }
        ol.log li { margin: 0.2rem 0; word-break: break-word; }
        ol.log li.failed { color: #a4161a; }
        #no-key { color: #a4161a; font-weight: bold; }
        ol.log .source, ol.log time { color: #444; }
        ol.log .reason { color: #6b3e00; }
        #running { font-weight: bold; }
        @media (max-width: 40rem) { body { padding: 0.5rem; } th:nth-child(1), td:nth-child(1) { display: none; } }
        """
}
