"""Draw the installable app's icons from the favicon's design, in headless
Chromium (Pillow is not a dependency): 192 and 512 px, and a maskable 512 px one whose mark
stays inside the central 80 % safe zone. Run: .venv/bin/python scripts/app_icons.py"""

from pathlib import Path

from playwright.sync_api import sync_playwright

OUT = Path(__file__).resolve().parent.parent / "ctr" / "static" / "ctr" / "icons"
BRAND = "#14532d"  # --brand of maps/static/maps/ctr.css, the manifest's theme colour


def svg(size: int, maskable: bool) -> str:
    # The maskable icon fills the square (the launcher cuts its own shape) and shrinks the
    # mark; the plain one is a rounded square like the favicon.
    radius = 0 if maskable else size * 0.1875
    font = size * (0.24 if maskable else 0.34)
    return f"""<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}"
      viewBox="0 0 {size} {size}"><rect width="{size}" height="{size}" rx="{radius}"
      fill="{BRAND}"/><text x="50%" y="50%" dy="0.35em" font-family="DejaVu Sans, Arial,
      sans-serif" font-size="{font}" font-weight="700" fill="#fff"
      text-anchor="middle">CTR</text></svg>"""


def main() -> None:
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"]
        )
        for name, size, maskable in (
            ("icon-192.png", 192, False),
            ("icon-512.png", 512, False),
            ("icon-maskable-512.png", 512, True),
        ):
            page = browser.new_page(viewport={"width": size, "height": size})
            page.set_content(
                "<style>html,body{margin:0;background:transparent}</style>" + svg(size, maskable)
            )
            page.locator("svg").screenshot(path=str(OUT / name), omit_background=True)
            page.close()
        browser.close()


if __name__ == "__main__":
    main()
