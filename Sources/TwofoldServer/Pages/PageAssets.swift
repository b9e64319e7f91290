/// The pages' stylesheet and their one script, served as files (`Pages.stylesheet`,
/// `Pages.script`): the Content-Security-Policy allows no inline style or script.
enum PageAssets {
    static let stylesheet = """
        :root { color-scheme: light; --ink: #1a1a1a; --muted: #4a4a4a; --line: #b8b8b8; --accent: #0b57d0;
          --danger: #a50e0e; --paper: #ffffff; --soft: #f3f5f8; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 17px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
          background: var(--paper); }
        .skip { position: absolute; left: -999px; top: 0; background: var(--ink); color: #fff; padding: .5rem 1rem; }
        .skip:focus { left: 0; }
        header { background: var(--soft); border-bottom: 1px solid var(--line); }
        header nav { max-width: 46rem; margin: 0 auto; padding: .6rem 1rem; display: flex; flex-wrap: wrap;
          gap: .4rem 1.2rem; align-items: center; }
        header .brand { font-weight: 700; margin-right: auto; }
        main { max-width: 46rem; margin: 0 auto; padding: 1rem 1rem 3rem; }
        a { color: var(--accent); }
        a:focus, button:focus, input:focus, textarea:focus { outline: 3px solid #f5b400; outline-offset: 2px; }
        h1 { font-size: 1.7rem; margin: .6rem 0 1rem; }
        h2 { font-size: 1.25rem; margin: 1.6rem 0 .5rem; }
        .field { margin: 0 0 1rem; }
        label { display: block; font-weight: 600; margin-bottom: .25rem; }
        input[type=text], input[type=email], input[type=password], input[type=search], input[type=date], input[type=tel],
        textarea {
          width: 100%; max-width: 28rem; font: inherit; padding: .55rem .6rem; border: 2px solid #5f5f5f;
          border-radius: 6px; background: #fff; color: var(--ink); }
        input[aria-invalid=true], textarea[aria-invalid=true] { border-color: var(--danger); }
        .check { display: flex; gap: .5rem; align-items: center; margin: 0 0 1rem; }
        .check label { font-weight: 400; margin: 0; }
        .check input { width: 1.2rem; height: 1.2rem; }
        button, .button { display: inline-block; font: inherit; font-weight: 600; padding: .55rem 1.1rem;
          border-radius: 6px; border: 2px solid var(--accent); background: var(--accent); color: #fff;
          cursor: pointer; text-decoration: none; margin: .2rem .3rem .2rem 0; }
        button.secondary, .button.secondary { background: #fff; color: var(--accent); }
        button:disabled, button[aria-disabled=true] { background: #e8e8e8; border-color: #9a9a9a; color: #4a4a4a;
          cursor: not-allowed; }
        button.danger { background: var(--danger); border-color: var(--danger); }
        button.link { background: none; border: none; color: var(--accent); text-decoration: underline;
          padding: 0; font-weight: 400; }
        form.inline { display: inline; }
        .passkey { margin: 0 0 1rem; }
        .push-number { font-size: 3rem; font-weight: 700; letter-spacing: .1em; margin: .5rem 0 1rem; }
        .hint { color: var(--muted); margin: 0 0 .3rem; font-size: .95rem; }
        .field-error { color: var(--danger); font-weight: 600; margin: 0 0 .3rem; }
        .field-error:empty { display: none; }
        .alert { border: 2px solid var(--danger); border-left-width: 8px; padding: .6rem 1rem; margin: 0 0 1rem;
          background: #fff6f6; }
        .alert h2 { margin: 0 0 .3rem; font-size: 1.1rem; }
        .note { border-left: 6px solid #1e7b34; padding: .4rem .8rem; background: #f2fbf4; }
        .todo { border-left: 6px solid var(--accent); padding: .4rem .8rem; margin: 0 0 1rem; background: var(--soft); }
        .todo h3 { margin: .2rem 0; font-size: 1.05rem; }
        fieldset { border: 1px solid var(--line); border-radius: 6px; margin: 0 0 1rem; }
        legend { font-weight: 600; padding: 0 .3rem; }
        table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; }
        caption { text-align: left; font-weight: 600; padding: .3rem 0; }
        th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
        /* A table wider than the screen scrolls inside its box: words stay whole, the page stays
           as wide as the screen. */
        .table-wrap { overflow-x: auto; margin: .5rem 0 1rem; }
        .table-wrap table { margin: 0; }
        .nowrap { white-space: nowrap; }
        .table-wrap:focus { outline: 3px solid #f5b400; outline-offset: 2px; }
        .request h2, .request h3 { overflow-wrap: break-word; }
        .codes { columns: 2; font-size: 1.15rem; }
        .qr svg { width: 220px; height: 220px; background: #fff; }
        .subnav { display: flex; flex-wrap: wrap; gap: 1rem; margin: 0 0 1rem; }
        .paging { display: flex; gap: 1rem; }
        .request { border: 1px solid var(--line); border-radius: 8px; padding: .3rem 1rem 1rem; margin: 0 0 1rem; }
        .message { white-space: pre-line; background: var(--soft); padding: .5rem; overflow-wrap: anywhere; }
        dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
        dt { font-weight: 600; }
        dd { margin: 0; overflow-wrap: anywhere; }
        code { overflow-wrap: anywhere; }
        @media (max-width: 30rem) { .codes { columns: 1; } dl { grid-template-columns: 1fr; } }
        @media print { header, .skip, button, .button, form, .hint { display: none !important; }
          main { max-width: none; padding: 0; } .codes { columns: 2; font-size: 14pt; } }
        """

    /// Passkeys (the only thing that needs script), and small conveniences that the pages work
    /// without: copy and print buttons, and counting down a wait.
    static let script = #"""
        "use strict";
        (function () {
          function csrf() {
            var field = document.querySelector("input[name=csrf]");
            return field ? field.value : "";
          }
          function post(path, body) {
            return fetch(path, {
              method: "POST", credentials: "same-origin",
              headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() },
              body: JSON.stringify(body || {})
            }).then(function (response) {
              return response.json().catch(function () { return {}; }).then(function (json) {
                if (!response.ok) {
                  var error = new Error(json.detail || json.title || "That did not work.");
                  error.code = json.code;
                  error.need = json.errors && json.errors.stepUp;
                  throw error;
                }
                return json;
              });
            });
          }
          function supported() {
            return window.PublicKeyCredential && PublicKeyCredential.parseRequestOptionsFromJSON;
          }
          function show(box) { box.hidden = false; }
          // The browser's errors (DOMException names) in words; the server's are already words.
          var said = {
            NotAllowedError: "The passkey request was cancelled or timed out. Try again, or use another way.",
            InvalidStateError: "This passkey is already on your account.",
            NotSupportedError: "This browser or device has no passkey that can be used here.",
            SecurityError: "Passkeys do not work at this address (" + location.host + "). Open the site at " +
              "its name (such as localhost) or its https:// address, then try again.",
            ConstraintError: "This device cannot make a passkey with a screen lock. Set up a screen lock first."
          };
          function fail(box, error) {
            var out = box.querySelector("[data-passkey-error]");
            if (!out || !error || error.name === "AbortError") { return; }
            out.textContent = said[error.name] || error.message || String(error);
          }
          function assert(options, mediation, signal) {
            var request = { publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options) };
            if (mediation) { request.mediation = mediation; }
            if (signal) { request.signal = signal; }
            return navigator.credentials.get(request);
          }
          // A passkey's answer goes to the server in the box's form, as every other form does.
          function submit(box, credential) {
            var form = box.querySelector("form[data-passkey-form]");
            form.querySelector("input[name=credential]").value = JSON.stringify(credential.toJSON());
            var trust = document.getElementById("f-trust");
            var carried = form.querySelector("input[name=trustDevice]");
            if (carried) { carried.value = trust && trust.checked ? "on" : ""; }
            form.submit();
          }
          // Sign in with a passkey: the button, and the username field's autofill.
          var signIn = document.querySelector("[data-passkey-sign-in]");
          if (signIn && supported()) {
            show(signIn);
            // One WebAuthn request at a time: the browser refuses a second while one is pending,
            // so the button first aborts the autofill request and waits for it to settle (at most
            // 2 seconds, should a browser never end it), and the autofill request does not start
            // while the button's is under way. Once a passkey was picked, nothing starts again.
            var controller = null;
            var pending = Promise.resolve();
            var modal = false;
            var done = false;
            var options = function () { return post(signIn.getAttribute("data-options")); };
            var finish = function (credential) {
              done = true;
              signIn.setAttribute("data-autofill", "sent");
              submit(signIn, credential);
            };
            var settled = function (promise) {
              return Promise.race([promise, new Promise(function (resolve) { setTimeout(resolve, 2000); })]);
            };
            var conditional = function () {
              if (!PublicKeyCredential.isConditionalMediationAvailable || done) { return; }
              var request = PublicKeyCredential.isConditionalMediationAvailable().then(function (available) {
                if (!available || modal || done) { return null; }
                controller = new AbortController();
                var signal = controller.signal;
                // Options that fail as the page loads leave autofill off, quietly: nobody asked.
                return options().then(function (answer) {
                  if (signal.aborted) { return null; }
                  // Marked for tests and assistive tools: the field's autofill is listening.
                  signIn.setAttribute("data-autofill", "waiting");
                  return assert(answer, "conditional", signal);
                }, function () { return null; });
              });
              pending = request.then(function () {}, function () {});
              request.then(function (credential) {
                if (!done) { signIn.setAttribute("data-autofill", "idle"); }
                // A passkey picked from the field signs in, also when the button was pressed as
                // it was picked (the button's own request then ends with the page).
                if (credential && !done) { finish(credential); }
              }, function (error) {
                signIn.setAttribute("data-autofill", "idle");
                fail(signIn, error);
              });
            };
            signIn.querySelector("[data-passkey-button]").addEventListener("click", function () {
              if (modal || done) { return; }
              modal = true;
              if (controller) { controller.abort(); }
              settled(pending).then(function () {
                return done ? null : options();
              }).then(function (answer) {
                return answer ? assert(answer) : null;
              }).then(function (credential) {
                if (credential && !done) { finish(credential); }
              }).catch(function (error) {
                fail(signIn, error);
                modal = false;
                conditional();
              });
            });
            conditional();
          }
          // A passkey as the second step of a sign-in, or as the step-up a change asked for.
          document.querySelectorAll("[data-passkey-flow], [data-passkey-step-up]").forEach(function (box) {
            if (!supported()) { return; }
            show(box);
            box.querySelector("[data-passkey-button]").addEventListener("click", function () {
              var flow = box.getAttribute("data-passkey-flow");
              post(box.getAttribute("data-options"), flow ? { otpFlowId: flow } : undefined).then(function (options) {
                return assert(options);
              }).then(function (credential) {
                submit(box, credential);
              }).catch(function (error) { fail(box, error); });
            });
          });
          // A passkey as the second factor a password reset needs: the JSON API, as the SDK calls it.
          var reset = document.querySelector("[data-passkey-reset]");
          if (reset && supported()) {
            show(reset);
            reset.querySelector("[data-passkey-button]").addEventListener("click", function () {
              var token = reset.getAttribute("data-passkey-reset");
              var field = document.querySelector("input[name=newPassword]");
              var password = field ? field.value : "";
              if (!password) { fail(reset, new Error("Type the new password first.")); return; }
              post(reset.getAttribute("data-options"), { token: token }).then(function (options) {
                return assert(options);
              }).then(function (credential) {
                return post(reset.getAttribute("data-verify"), {
                  token: token, newPassword: password, method: "webauthn", credential: credential.toJSON()
                });
              }).then(function () {
                window.location.assign(reset.getAttribute("data-done"));
              }).catch(function (error) { fail(reset, error); });
            });
          }
          // Add a passkey on the security page.
          var register = document.querySelector("[data-passkey-register]");
          if (register && window.PublicKeyCredential && PublicKeyCredential.parseCreationOptionsFromJSON) {
            show(register);
            register.querySelector("[data-passkey-button]").addEventListener("click", function () {
              post(register.getAttribute("data-options"), {}).then(function (options) {
                return navigator.credentials.create({
                  publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options)
                });
              }).then(function (credential) {
                return post(register.getAttribute("data-verify"), { credential: credential.toJSON() });
              }).then(function (answer) {
                // Then the new passkey's name, prefilled from its provider, on the security page.
                var named = register.getAttribute("data-added") + encodeURIComponent(answer.credential.id);
                if (!answer.backupCodes) { window.location.assign(named); return; }
                // A first factor brings backup codes: shown once, here.
                var main = document.getElementById("main");
                main.textContent = "";
                var heading = document.createElement("h1");
                heading.textContent = "Save your backup codes";
                var said = document.createElement("p");
                said.setAttribute("role", "status");
                said.textContent = "Your passkey was added. Each of these codes signs you in once if you lose it; "
                  + "they are shown only now.";
                var list = document.createElement("ul");
                list.className = "codes";
                answer.backupCodes.forEach(function (code) {
                  var item = document.createElement("li");
                  var text = document.createElement("code");
                  text.textContent = code;
                  item.appendChild(text);
                  list.appendChild(item);
                });
                var done = document.createElement("a");
                done.className = "button";
                done.href = named;
                done.textContent = "I have saved these";
                var print = document.createElement("button");
                print.type = "button";
                print.className = "secondary";
                print.textContent = "Print";
                print.addEventListener("click", function () { window.print(); });
                main.append(heading, said, list, print, done);
                heading.setAttribute("tabindex", "-1");
                heading.focus();
              }).catch(function (error) {
                // A change that needs a recent proof first: the step-up page, then back here.
                if (error.code === "step_up_required") {
                  window.location.assign(register.getAttribute("data-step-up") + "?next="
                    + encodeURIComponent(location.pathname) + (error.need ? "&need=" + encodeURIComponent(error.need) : ""));
                  return;
                }
                fail(register, error);
              });
            });
          }
          // "Approve on your phone": wait for the phone's answer (each call a long poll the server
          // answers as soon as the phone does, never closer than a second apart), then finish.
          document.querySelectorAll("[data-push-wait]").forEach(function (box) {
            var state = box.querySelector("[data-push-state]");
            var form = box.querySelector("[data-push-complete]");
            var ask = function () {
              var asked = Date.now();
              var body = { requestId: box.getAttribute("data-request"), wait: 25 };
              if (box.hasAttribute("data-flow")) { body.otpFlowId = box.getAttribute("data-flow"); }
              post(box.getAttribute("data-status"), body).then(function (answer) {
                if (answer.status === "approved") {
                  state.textContent = box.getAttribute("data-approved") || "Approved. Signing you in…";
                  form.submit();
                  return;
                }
                if (answer.status !== "pending") {
                  state.textContent = answer.message || "Your phone did not approve this sign-in.";
                  state.setAttribute("role", "alert");
                  form.hidden = true;
                  return;
                }
                setTimeout(ask, Math.max(0, 1000 - (Date.now() - asked)));
              }, function (error) {
                state.textContent = error.message;
                setTimeout(ask, 5000);
              });
            };
            ask();
          });
          // Copy and print.
          document.querySelectorAll("[data-copy]").forEach(function (button) {
            if (!navigator.clipboard) { return; }
            button.hidden = false;
            button.addEventListener("click", function () {
              var source = document.getElementById(button.getAttribute("data-copy"));
              navigator.clipboard.writeText(source ? source.innerText : "").then(function () {
                button.textContent = "Copied";
              });
            });
          });
          document.querySelectorAll("[data-print]").forEach(function (button) {
            button.hidden = false;
            button.addEventListener("click", function () { window.print(); });
          });
          // Moments in the person's own time zone; within a week, relative, the exact time as title.
          document.querySelectorAll("time[data-local]").forEach(function (time) {
            var when = new Date(time.getAttribute("datetime"));
            if (isNaN(when.getTime())) { return; }
            var exact = when.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
            // Relative to the server's clock, which made every one of these moments.
            var now = Date.parse(document.body.getAttribute("data-now") || "") || Date.now();
            var seconds = Math.round((when.getTime() - now) / 1000);
            var size = Math.abs(seconds);
            if (size >= 7 * 86400 || !window.Intl || !Intl.RelativeTimeFormat) { time.textContent = exact; return; }
            var unit = size < 60 ? ["second", 1] : size < 3600 ? ["minute", 60] : size < 86400 ? ["hour", 3600]
              : ["day", 86400];
            var words = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
            time.textContent = words.format(Math.round(seconds / unit[1]), unit[0]);
            time.title = exact;
          });
          // Count a wait down, once a second.
          document.querySelectorAll("[data-countdown]").forEach(function (out) {
            var left = parseInt(out.getAttribute("data-countdown"), 10);
            var timer = setInterval(function () {
              left -= 1;
              out.textContent = String(Math.max(left, 0));
              if (left <= 0) { clearInterval(timer); }
            }, 1000);
          });
          // Fields shut for a wait the server asked for open when it ends.
          document.querySelectorAll("[data-until]").forEach(function (field) {
            var wait = parseInt(field.getAttribute("data-until"), 10);
            setTimeout(function () { field.disabled = false; }, Math.max(wait, 0) * 1000);
          });
          var problem = document.getElementById("problem");
          if (problem) { problem.focus(); }
        })();
        """#
}
