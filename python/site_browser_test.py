# The results site in a real browser: builds the site of results/ (gpuparanoia.site) and opens it in
# Debian's chromium, headless, through selenium and chromium-driver, one browser for every page by
# file:// URLs: each page loads without a console error, each link's target loads, each image
# renders, a click on the index's device heading sorts its rows, and its filter keeps a device's row
# and hides the others. ctest runs it (python_site_browser) with the build tree's package on
# PYTHONPATH; exit 77 is a skip, saying why.
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

SKIP = 77
# The package from PYTHONPATH (the build tree's, with its extension), not the source folder beside
# this script, which Python puts first on the path.
sys.path = [p for p in sys.path if pathlib.Path(p or ".").resolve() != pathlib.Path(__file__).resolve().parent]


def browser():
    """A headless chromium driven by chromedriver, or the reason there is none."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as err:
        return None, f"selenium is not installed (python3-selenium: scripts/setup-debian): {err}"
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    chromedriver = shutil.which("chromedriver")
    if not chromium or not chromedriver:
        return None, "chromium or chromedriver is not installed (chromium, chromium-driver: scripts/setup-debian)"
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--allow-file-access-from-files"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        return webdriver.Chrome(service=Service(chromedriver), options=options), ""
    except Exception as err:  # noqa: BLE001 (a browser that does not start is a skip, said why)
        return None, f"chromium does not start under chromedriver: {type(err).__name__}: {err}"


def local_path(url):
    parsed = urllib.parse.urlparse(url)
    assert parsed.scheme == "file", f"{url}: not a relative link within the site"
    return pathlib.Path(urllib.request.url2pathname(parsed.path))


# A page's links (a, link, script) as the browser resolves them, and its images with whether each
# rendered: one script per page, not a round trip per element.
PAGE_LINKS = """
const urls = [];
for (const [tag, attr] of [["a", "href"], ["link", "href"], ["script", "src"], ["img", "src"]])
  for (const e of document.getElementsByTagName(tag)) if (e.getAttribute(attr)) urls.push(e[attr]);
const images = Array.from(document.images, i => [i.src, i.complete && i.naturalWidth > 0]);
return [urls, images];
"""


def check_page(driver, page, failures):
    """Loads the page; returns the (URL, file) its links name (resolved by the browser)."""
    driver.get(page.as_uri())
    for entry in driver.get_log("browser"):
        if entry["level"] == "SEVERE":
            failures.append(f"{page.name}: console: {entry['message']}")
    urls, images = driver.execute_script(PAGE_LINKS)
    failures += [f"{page.name}: image {src} does not render" for src, rendered in images if not rendered]
    return [(url, local_path(url.split("#")[0])) for url in urls]


def check_filter(driver, index, failures):
    from selenium.webdriver.common.by import By

    driver.get(index.as_uri())
    rows = driver.find_elements(By.CSS_SELECTOR, "tr.device")
    names = [r.get_attribute("data-name") for r in rows]
    if len(set(names)) < 2:
        failures.append(f"index.html: {len(set(names))} distinct device names, the filter cannot be checked")
        return
    # Sorting: a click on the heading orders the rows by the column, a second click the other way.
    heading = driver.find_element(By.CSS_SELECTOR, "#results th")
    ordered = """const names = Array.from(document.querySelectorAll("tr.device"), r => r.cells[0].textContent.trim());
                 return names.every((n, i) => i == 0 || arguments[0] * names[i - 1].localeCompare(n) <= 0);"""
    for direction in (1, -1):
        heading.click()
        if not driver.execute_script(ordered, direction):
            failures.append(f"index.html: a click on the device heading does not sort ({direction})")
    rows = driver.find_elements(By.CSS_SELECTOR, "tr.device")  # in the order sorted
    names = [r.get_attribute("data-name") for r in rows]
    wanted = names[0]
    other = next(i for i, n in enumerate(names) if wanted.lower() not in n.lower())
    driver.find_element(By.ID, "filter").send_keys(wanted)
    hidden = [r.get_attribute("hidden") is not None for r in rows]
    if hidden[0] or not rows[0].is_displayed():
        failures.append(f"filter {wanted!r} hides its own row")
    if not hidden[other] or rows[other].is_displayed():
        failures.append(f"filter {wanted!r} leaves {names[other]!r} visible")


def main():
    source = pathlib.Path(os.environ.get("GPUPARANOIA_SOURCE_DIR") or pathlib.Path(__file__).resolve().parents[1])
    try:
        import gpuparanoia.site
    except ImportError as err:
        print(f"site_browser_test: skipped: the site cannot be built here: {err}")
        return SKIP
    driver, why = browser()
    if driver is None:
        print(f"site_browser_test: skipped: {why}")
        return SKIP
    start = time.monotonic()
    failures = []
    with tempfile.TemporaryDirectory(prefix="site_browser_test.") as out:
        out = pathlib.Path(out)
        try:
            results = [source / "results"]
            # An error analysis too where the program is at hand: its plots are images to render.
            binary = os.environ.get("GPUPARANOIA_BINARY")
            if binary:
                error = out.parent / f"{out.name}.error.json"
                subprocess.run([binary, "error", "--instruction", "hopper:HMMA.16816.F32", "--ks", "16", "256",
                                "--trials", "2", "--what-if", "F=23", "--json", str(error)], check=True,
                               capture_output=True)
                results.append(error)
            gpuparanoia.site.build(results, out)
            built = time.monotonic() - start
            pages = sorted(out.glob("*.html"))
            targets = []
            for page in pages:
                targets += check_page(driver, page, failures)
            if binary and not any(p.name.endswith(".error.html") for p in pages):
                failures.append("the error analysis has no page")
            for url, path in targets:
                if not path.is_file():
                    failures.append(f"link {url} does not resolve")
                elif path.suffix == ".html" and path.parent != out:
                    failures.append(f"link {url} leaves the site")
            # The targets that are neither pages (each loaded above) nor a page's stylesheet, script or
            # image (loaded with it: a failure is a console error, an image's naturalWidth 0) load too.
            loaded_with_pages = {".html", ".css", ".js", ".svg", ".png"}
            for url, path in {t for t in targets if t[1].suffix not in loaded_with_pages and t[1].is_file()}:
                driver.get(url)
                failures += [f"{url}: console: {e['message']}" for e in driver.get_log("browser")
                             if e["level"] == "SEVERE"]
            check_filter(driver, out / "index.html", failures)
        finally:
            driver.quit()
    for f in failures:
        print("site_browser_test: FAIL:", f)
    if binary:
        error.unlink(missing_ok=True)
    print(f"site_browser_test: {len(pages)} pages, {len(targets)} links and images, "
          f"{time.monotonic() - start:.1f} s (the site's build {built:.1f} s): {'failed' if failures else 'ok'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
