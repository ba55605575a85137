"""Drives `deja ui` in a real browser (Chromium through ChromeDriver, with
Selenium's Python client) and checks what a person sees.

Argument: one JSON object with base (http://127.0.0.1:PORT), token,
chromium, chromedriver, profile (a folder for the browser's profile), shots
(where screenshots go), and the ids of three sessions: tenant (found by the
query below), hostile (a transcript full of markup) and forget (forgotten
through the page). Exits 1 at the first failed check, naming it.
"""

import json
import sys

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

cfg = json.loads(sys.argv[1])
base = cfg["base"]


def check(ok, what):
    if not ok:
        print(f"FAILED: {what}", flush=True)
        sys.exit(1)
    print(f"ok: {what}", flush=True)


options = webdriver.ChromeOptions()
options.binary_location = cfg["chromium"]
for arg in (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--window-size=1280,1000",
    "--user-data-dir=" + cfg["profile"],
):
    options.add_argument(arg)
options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
driver = webdriver.Chrome(service=Service(cfg["chromedriver"]), options=options)
wait = WebDriverWait(driver, 60)


def body_text():
    return driver.find_element(By.TAG_NAME, "body").text


def shot(name):
    driver.save_screenshot(f"{cfg['shots']}/{name}.png")


def nothing_ran(where):
    # The stored script would set the title to exactly 'pwned'.
    check(driver.title.endswith(" · deja"), f"{where}: the page title is deja's own ({driver.title[:40]!r})")
    check(driver.execute_script("return window.pwned === undefined"), f"{where}: no stored script ran")
    for tag in ("script", "img", "iframe", "style"):
        check(not driver.find_elements(By.TAG_NAME, tag), f"{where}: no <{tag}> element in the page")


try:
    # Without the token the page is refused.
    driver.get(base + "/")
    check("needs the address" in body_text(), "a request without the token is refused")

    # The printed address lets the browser in and drops the token.
    driver.get(f"{base}/?token={cfg['token']}")
    check(driver.current_url == base + "/", f"the token leaves the address ({driver.current_url})")
    check(driver.find_elements(By.CSS_SELECTOR, "ul.sessions li"), "the front page lists the newest sessions")

    # Search the demo fixtures.
    box = driver.find_element(By.NAME, "q")
    box.send_keys("that tenant predicate bug")
    driver.find_element(By.CSS_SELECTOR, "form.search button").click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "ol.hits li.group"))
    first = driver.find_element(By.CSS_SELECTOR, "ol.hits li.group .session a.id").text
    check(first == cfg["tenant"], f"the tenant-predicate session comes first ({first})")
    marks = [m.text.lower() for m in driver.find_elements(By.CSS_SELECTOR, "li.group mark")]
    check("tenant" in marks and "predicate" in marks, f"matched words are highlighted ({marks[:6]})")
    shot("search")

    # The hit opens its session at that message.
    hit = driver.find_element(By.CSS_SELECTOR, "ol.hits li.group a.hit")
    hit.click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "article.msg.hit"))
    article = driver.find_element(By.CSS_SELECTOR, "article.msg.hit")
    anchor = article.get_attribute("id")
    check(driver.current_url.endswith("#" + anchor), f"the address points at the hit ({driver.current_url})")
    in_view = driver.execute_script(
        "const r = arguments[0].getBoundingClientRect(); return r.top < window.innerHeight && r.bottom > 0;",
        article,
    )
    check(in_view, "the hit is on screen")
    check(driver.find_elements(By.CSS_SELECTOR, "article.msg.near"), "the hit's neighbours are marked")
    resume = driver.find_element(By.CSS_SELECTOR, ".resume").text
    # aider keeps no session ids: its reader says how to reload the history.
    check(
        resume.startswith("Cannot be resumed here: aider cannot reopen") and "aider --restore-chat-history" in resume,
        f"the session page gives the reader's resume advice ({resume[:80]!r})",
    )
    check(driver.find_elements(By.CSS_SELECTOR, "pre.code span.k"), "code blocks are highlighted")
    shot("session")

    # A long block is folded; it unfolds and folds again.
    fold = driver.find_element(By.CSS_SELECTOR, "details.fold")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", fold)
    block = fold.find_element(By.TAG_NAME, "pre")
    check(fold.get_attribute("open") is None and not block.is_displayed(), "a long block starts folded")
    fold.find_element(By.TAG_NAME, "summary").click()
    check(fold.get_attribute("open") is not None and block.is_displayed(), "it unfolds")
    fold.find_element(By.TAG_NAME, "summary").click()
    check(fold.get_attribute("open") is None and not block.is_displayed(), "it folds again")

    # Timeline and status.
    driver.find_element(By.LINK_TEXT, "Timeline").click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "table.timeline"))
    check("sessions" in body_text(), "the timeline counts sessions")
    shot("timeline")
    driver.find_element(By.LINK_TEXT, "Status").click()
    wait.until(lambda d: d.find_elements(By.TAG_NAME, "h1"))
    text = body_text()
    check("Readers" in text and "aider" in text and "Agents" in text, "the status page reports readers and agents")
    shot("status")

    # A hostile transcript shows as text and runs nothing.
    driver.get(f"{base}/session/{cfg['hostile']}")
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "article.msg"))
    text = body_text()
    check("<script>document.title='pwned'" in text, "stored markup is shown as text")
    check("</recalled-memory>" in text, "stored text is shown as it is, tags and all")
    check("\x1b" not in text and "␛]0;pwned␇" in text, "escape sequences are shown as visible stand-ins")
    nothing_ran("session page")
    check(
        not driver.find_elements(By.CSS_SELECTOR, "a[href^='javascript']"),
        "no stored link became a link",
    )
    driver.get(f"{base}/search?q=quuxbanner")
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "ol.hits li.group"))
    check("<script>" in body_text(), "the hostile hit's snippet is text")
    nothing_ran("search page")

    # Forget with confirmation: keeping it changes nothing; confirming forgets.
    driver.get(f"{base}/session/{cfg['forget']}")
    driver.find_element(By.CSS_SELECTOR, "p.actions a.danger").click()
    wait.until(lambda d: "Forget this session?" in d.find_element(By.TAG_NAME, "h1").text)
    driver.find_element(By.LINK_TEXT, "Keep it").click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "article.msg"))
    check(cfg["forget"] in body_text(), "keeping it leaves the session in place")
    driver.find_element(By.CSS_SELECTOR, "p.actions a.danger").click()
    wait.until(lambda d: "Forget this session?" in d.find_element(By.TAG_NAME, "h1").text)
    driver.find_element(By.CSS_SELECTOR, "form.confirm button.danger").click()
    wait.until(lambda d: d.find_element(By.TAG_NAME, "h1").text == "Forgotten")
    check(cfg["forget"] in body_text() and "deja forget --undo" in body_text(), "the page says what forgetting did")
    driver.get(f"{base}/session/{cfg['forget']}")
    check(cfg["forget"] in body_text() and "Something went wrong" in body_text(), "the forgotten session is gone")

    # Nothing was even tried and blocked: a CSP violation would mean that
    # stored markup reached the page as markup.
    blocked = [e for e in driver.get_log("browser") if "Content Security Policy" in e.get("message", "")]
    check(not blocked, f"the browser blocked nothing under the page's policy ({blocked[:3]})")
    print("all checks passed", flush=True)
finally:
    driver.quit()
