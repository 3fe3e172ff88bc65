#!/usr/bin/env python3
"""$BROWSER for the real-browser tests: hands the URL to headless Chromium driven by Selenium.

Chromium (Debian's chromium + chromium-driver) opens the authorize URL, fills in the managed
login's page, or the IdP's page after the hop, from the plan in $AUTHCTL_TEST_BROWSER_PLAN (as
script_browser.py), and follows the redirect to authctl's loopback listener like any browser.
The pages' titles, the final URL and the text of the listener's page go to the plan's "result".
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time


def main() -> int:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    url = sys.argv[1]
    plan = json.load(open(os.environ["AUTHCTL_TEST_BROWSER_PLAN"]))
    seen: dict = {"argv": sys.argv[1:], "pages": []}
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                f"--user-data-dir={tempfile.mkdtemp(prefix='chromium-')}"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.set_page_load_timeout(30)
        driver.get(url)
        for _ in range(5):
            seen["pages"].append({"url": driver.current_url.split("?")[0], "title": driver.title})
            if driver.current_url.startswith("http://localhost"):
                break
            if driver.find_elements(By.ID, "idpUsername"):
                driver.find_element(By.ID, "idpUsername").send_keys(plan["username"])
                driver.find_element(By.ID, "idpPassword").send_keys(plan["password"])
                driver.find_element(By.ID, "idpCancel" if plan.get("idp") == "cancel" else "idpSubmit").click()
            elif driver.find_elements(By.ID, "signInFormUsername"):
                driver.find_element(By.ID, "signInFormUsername").send_keys(plan["username"])
                driver.find_element(By.ID, "signInFormPassword").send_keys(plan["password"])
                driver.find_element(By.NAME, "signInSubmitButton").click()
            else:
                break
            time.sleep(0.2)
        seen.update(final_url=driver.current_url, final_title=driver.title,
                    final_body=driver.find_element(By.TAG_NAME, "body").text)
    finally:
        driver.quit()
        with open(plan["result"], "w") as f:
            json.dump(seen, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
