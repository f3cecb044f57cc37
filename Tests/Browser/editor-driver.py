#!/usr/bin/env python3
"""Drives the settings editor's page (`defaults edit`) in headless Chromium, for the Swift tests.

    editor-driver.py            reads one JSON command a line on standard input, answers each
                                with one JSON line on standard output, until `quit` or the end
    editor-driver.py --check    exits 0 when Chromium, chromedriver and Selenium are all here

The tests say what to do and assert what they are told; this script asserts nothing. Commands
(each answer also has "ok": true, or "ok": false and "error"):

    {"do": "open", "url": U}                  -> {"ms": navigation to every key shown, "rows": N}
    {"do": "row", "key": K}                   -> the row as a person sees it (see row_state)
    {"do": "set", "key": K, "text": T}        puts T in the key's control and applies it
    {"do": "reset", "key": K}                 presses the key's reset button
    {"do": "overwrite", "key": K}             answers "Overwrite" to the changed-elsewhere question
    {"do": "search", "text": T}               -> {"shown": [keys shown], "count": text of the count}
    {"do": "only-modified", "on": bool}       -> {"shown": [...]}
    {"do": "wait-value", "key": K, "value": V, "timeout": S}
                                              -> {"ms": until the row shows V}
    {"do": "screenshot", "path": P}
    {"do": "console"}                         -> {"errors": the page's console errors (CSP ones too)}
    {"do": "visit", "url": U}                 -> {"text": what the browser shows at U}
    {"do": "attack", "url": U, "body": B}     from a page of another origin, POSTs B to U's api/write
                                              as a script can (fetch without and with CORS) and as
                                              a form can -> {"fetch": ..., "cors": ..., "form": text}
    {"do": "quit"}
"""

import json
import os
import shutil
import sys
import tempfile
import time

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def available():
    try:
        import selenium  # noqa: F401
    except ImportError:
        return False
    return bool(shutil.which("chromium") and shutil.which("chromedriver"))


def start(scratch):
    """Chromium, its temporary files in `scratch` (it leaves its singleton directories behind)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,900", "--no-first-run", "--disable-extensions"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(DRIVER, env=dict(os.environ, TMPDIR=scratch))
    browser = webdriver.Chrome(service=service, options=options)
    # A busy machine is slow, not broken: the waits only keep a broken test from hanging.
    browser.set_script_timeout(120)
    browser.set_page_load_timeout(120)
    return browser


def row_element(browser, key):
    # One round trip, whatever the number of keys.
    return browser.execute_script(
        "return [...document.querySelectorAll('[data-key]')].find((e) => e.dataset.key === arguments[0]) || null;",
        key)


ROW_STATE = """
    const row = [...document.querySelectorAll('[data-key]')].find((e) => e.dataset.key === arguments[0]);
    if (!row) return {exists: false};
    const shown = (selector) => {
        const element = row.querySelector(selector);
        return element && element.offsetParent !== null ? element.textContent : null;
    };
    const control = row.querySelector('.value-control');
    return {
        exists: true,
        shown: row.offsetParent !== null,
        value: shown('.current-value'),
        source: shown('.source'),
        error: shown('.error') || null,
        managed: shown('.managed'),
        conflict: !!row.querySelector('.overwrite'),
        controlEnabled: !!control && !control.disabled && !control.readOnly,
        controlValue: control ? control.value : null,
        busy: row.getAttribute('aria-busy') === 'true',
    };
"""


def row_state(browser, key):
    """The row as a person sees it, read in one round trip."""
    return browser.execute_script(ROW_STATE, key)


def prepare(browser, key):
    """Brings the row into view, as a person scrolling to it does, and waits until its controls are
    there (the page builds a row's edit area when it comes near the viewport or takes focus)."""
    browser.execute_script(
        "const row = [...document.querySelectorAll('[data-key]')].find((e) => e.dataset.key === arguments[0]);"
        "if (row) row.scrollIntoView({block: 'center'});", key)
    wait(lambda: browser.execute_script(
        "const row = [...document.querySelectorAll('[data-key]')].find((e) => e.dataset.key === arguments[0]);"
        "return !row || !!row.querySelector('.value-control');", key))


def wait(condition, timeout=120.0):
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise TimeoutError("the page did not get there in %.0f s" % timeout)
        time.sleep(0.025)


def settle(browser, key):
    """Waits for the row's request to be answered (the page marks the row busy meanwhile)."""
    wait(lambda: not row_state(browser, key).get("busy"))


def shown_keys(browser):
    return browser.execute_script(
        "return [...document.querySelectorAll('[data-key]')]"
        ".filter((e) => e.offsetParent !== null).map((e) => e.dataset.key);")


def filtered(browser):
    """The keys shown once the count the page gives (`12 of 1000 keys`) agrees with them (none
    shown is an answer too)."""
    from selenium.webdriver.common.by import By

    def agreed():
        shown = shown_keys(browser)
        count = browser.find_element(By.ID, "shown-count").text.split(" ")[0].replace(",", "")
        return (shown,) if count == str(len(shown)) else None
    return wait(agreed)[0]


def handle(browser, command):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    action = command["do"]
    if action == "open":
        started = time.monotonic()
        browser.get(command["url"])
        wait(lambda: browser.execute_script("return document.body.dataset.ready") in ("true", "error"))
        elapsed = (time.monotonic() - started) * 1000
        # The page's own measure: from the start of navigation to every key shown.
        ready = browser.execute_script(
            "const m = performance.getEntriesByName('keys-shown')[0];"
            "return m ? m.startTime : null;")
        # Where the time went: the page's document, its script, the domain's answer.
        steps = browser.execute_script(
            "const out = {};"
            "const n = performance.getEntriesByType('navigation')[0];"
            "if (n) { out.document = n.responseEnd; out.domContentLoaded = n.domContentLoadedEventEnd; }"
            "for (const r of performance.getEntriesByType('resource')) {"
            "  out[r.name.split('/').pop()] = r.responseEnd; }"
            "for (const m of performance.getEntriesByType('mark')) { out[m.name] = m.startTime; }"
            "return out;")
        return {"ms": ready if ready is not None else elapsed, "steps": steps,
                "ready": browser.execute_script("return document.body.dataset.ready"),
                "rows": len(browser.find_elements(By.CSS_SELECTOR, "[data-key]"))}
    if action == "row":
        prepare(browser, command["key"])
        return row_state(browser, command["key"])
    if action == "set":
        key = command["key"]
        prepare(browser, key)
        row = row_element(browser, key)
        control = row.find_element(By.CSS_SELECTOR, ".value-control")
        kind = control.get_attribute("type")
        if control.tag_name == "select":
            Select(control).select_by_value(command["text"])
        elif kind == "checkbox":
            if control.is_selected() != (command["text"] == "true"):
                control.click()
        else:
            control.send_keys(Keys.CONTROL, "a")
            control.send_keys(Keys.DELETE)
            control.send_keys(command["text"])
            row.find_element(By.CSS_SELECTOR, ".set").click()
        settle(browser, key)
        return row_state(browser, key)
    if action in ("reset", "overwrite"):
        key = command["key"]
        prepare(browser, key)
        row_element(browser, key).find_element(By.CSS_SELECTOR, "." + action).click()
        settle(browser, key)
        return row_state(browser, key)
    if action == "search":
        box = browser.find_element(By.ID, "search")
        # Typed as a person types, so that the page hears each change (clear() sends no input event).
        box.send_keys(Keys.CONTROL, "a")
        box.send_keys(Keys.DELETE)
        if command["text"]:
            box.send_keys(command["text"])
        # The page filters as each key is typed; what it shows agrees with its count once done.
        wait(lambda: browser.execute_script("return document.getElementById('search').value") == command["text"])
        return {"shown": filtered(browser), "count": browser.find_element(By.ID, "shown-count").text}
    if action == "only-modified":
        box = browser.find_element(By.ID, "only-modified")
        if box.is_selected() != command["on"]:
            box.click()
        return {"shown": filtered(browser)}
    if action == "wait-value":
        started = time.monotonic()
        wait(lambda: (row_state(browser, command["key"]).get("value") == command["value"]),
             command.get("timeout", 120))
        return {"ms": (time.monotonic() - started) * 1000}
    if action == "screenshot":
        browser.save_screenshot(command["path"])
        return {}
    if action == "visit":
        browser.get(command["url"])
        return {"text": browser.find_element(By.TAG_NAME, "body").text}
    if action == "attack":
        target = command["url"] + "api/write"
        body = command["body"]
        # A page of its own origin (opaque: a data: URL), as another site's page would be.
        browser.get("data:text/html,<title>elsewhere</title><p>elsewhere</p>")
        script = """
            const [target, body, cors, done] = arguments;
            const options = cors
                ? {method: 'POST', headers: {'Content-Type': 'application/json'}, body}
                : {method: 'POST', mode: 'no-cors', headers: {'Content-Type': 'text/plain'}, body};
            fetch(target, options).then((r) => done('answered ' + r.type + ' ' + r.status),
                                        (e) => done('failed: ' + e));
        """
        answers = {"fetch": browser.execute_async_script(script, target, body, False),
                   "cors": browser.execute_async_script(script, target, body, True)}
        # A form's text/plain body can be made to read as JSON: name={"key":...,"x":" value="}
        browser.execute_script("""
            const [target, body] = arguments;
            const form = document.createElement('form');
            form.method = 'POST'; form.action = target; form.enctype = 'text/plain';
            const input = document.createElement('input');
            input.name = body.slice(0, -1) + ',"x":"'; input.value = '"}';
            form.append(input); document.body.append(form); form.submit();
        """, target, body)
        wait(lambda: browser.execute_script("return location.protocol") == "http:")
        answers["form"] = browser.find_element(By.TAG_NAME, "body").text
        return answers
    if action == "console":
        entries = browser.get_log("browser")
        return {"errors": [entry["message"] for entry in entries if entry.get("level") == "SEVERE"]}
    raise ValueError("unknown command %r" % action)


def main():
    if "--check" in sys.argv:
        sys.exit(0 if available() else 1)
    scratch = tempfile.mkdtemp(prefix="editor-driver-")
    browser = None
    try:
        browser = start(scratch)
        for line in sys.stdin:
            command = json.loads(line)
            if command.get("do") == "quit":
                break
            try:
                answer = handle(browser, command)
                answer["ok"] = True
            except Exception as error:  # every failure is told to the test, which reports it
                answer = {"ok": False, "error": "%s: %s" % (type(error).__name__, error)}
            print(json.dumps(answer), flush=True)
    finally:
        try:
            if browser is not None:
                browser.quit()
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
