#!/usr/bin/env python3
"""A plain-HTTP stand-in for a person's browser, used as $BROWSER by the browser sign-in tests.

authctl runs it with the authorize URL as its one argument. It follows redirects, fills in the
managed login's (or the IdP's) form from the plan in $AUTHCTL_TEST_BROWSER_PLAN (JSON: username,
password, idp "login"/"cancel", cookies (a cookie-jar file kept across runs, like a browser
profile), forge_state, stop_at_callback), and lands on authctl's loopback listener. What it saw is
written to the plan's "result" file: the pages' titles, the final URL, status and body.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def main() -> int:
    url = sys.argv[1]
    plan = json.load(open(os.environ["AUTHCTL_TEST_BROWSER_PLAN"]))
    jar = http.cookiejar.LWPCookieJar(plan["cookies"]) if plan.get("cookies") else http.cookiejar.CookieJar()
    if plan.get("cookies") and os.path.exists(plan["cookies"]):
        jar.load(ignore_discard=True)
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirect())
    seen: dict = {"argv": sys.argv[1:], "pages": [], "environ": sorted(os.environ)}
    data = None
    for _ in range(20):
        # authctl's own /start (which redirects to the managed login) is no callback.
        if urllib.parse.urlsplit(url).hostname == "localhost" and urllib.parse.urlsplit(url).path != "/start":
            if plan.get("forge_state"):
                url = re.sub(r"state=[^&]*", "state=forged", url)
            if plan.get("stop_at_callback"):
                seen["callback"] = url
                break
            if plan.get("before_callback"):  # a command the test runs at this moment (argv)
                subprocess.run(plan.pop("before_callback"), check=True, timeout=20)
        try:
            resp = opener.open(urllib.request.Request(url, data=data), timeout=30)
            status, body, location = resp.status, resp.read().decode(errors="replace"), None
        except urllib.error.HTTPError as e:
            status, body, location = e.code, e.read().decode(errors="replace"), e.headers.get("Location")
        except urllib.error.URLError as e:  # nothing listens there: a browser shows its error page
            seen.update(final_url=url, final_status=None, final_body=f"cannot connect: {e.reason}")
            break
        data = None
        title = re.search(r"<title>(.*?)</title>", body)
        seen["pages"].append({"url": url.split("?")[0], "status": status, "title": title.group(1) if title else ""})
        if location:
            url = urllib.parse.urljoin(url, location)
            continue
        seen.update(final_url=url, final_status=status, final_body=body)
        form = re.search(r'<form method="post" action="([^"]+)"', body)
        if not form or urllib.parse.urlsplit(url).hostname == "localhost":
            break
        hidden = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', body))
        fields = dict(hidden, username=plan["username"], password=plan["password"])
        if "/_idp/" in form.group(1) and plan.get("idp") == "cancel":
            fields["cancel"] = "Cancel"
        url = urllib.parse.urljoin(url, form.group(1))
        data = urllib.parse.urlencode(fields).encode()
    if plan.get("cookies"):
        jar.save(ignore_discard=True)
    with open(plan["result"], "w") as f:
        json.dump(seen, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
