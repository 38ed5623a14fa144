"""manage.py tour: the illustrated tour of docs/tour.md, photographed from the demo."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from tour import walk as tour


@contextmanager
def served_here(timeout_s: float = 60):
    """This checkout's app under `runserver` on a free port, for as long as the tour takes."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=settings.BASE_DIR,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                urllib.request.urlopen(url + "/", timeout=5).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise CommandError("o servidor do app não subiu para a visita") from None
                time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


class Command(BaseCommand):
    help = (
        "Fotografa o caminho principal de cada perfil na demonstração (computador e celular) "
        "e escreve o roteiro e as fotos em .local/tour/ (fora do git); --docs docs reescreve "
        "docs/tour.md e docs/tour/."
    )

    def add_arguments(self, parser):
        # Where git does not look: a run leaves the tracked docs alone unless told.
        parser.add_argument(
            "--docs",
            default=str(Path(settings.BASE_DIR) / ".local" / "tour"),
            help="pasta do roteiro tour.md e das fotos em tour/ (padrão: .local/tour; "
            "docs para atualizar a documentação)",
        )
        parser.add_argument(
            "--base-url", help="um servidor já no ar (padrão: sobe o app numa porta livre)"
        )

    def handle(self, *args, docs, base_url, **options):
        from playwright.sync_api import sync_playwright

        docs_dir = Path(docs)
        image_dir = docs_dir / "tour"
        image_dir.mkdir(parents=True, exist_ok=True)
        try:
            journeys = tour.journeys(tour.demo_references())
        except LookupError as error:
            raise CommandError(str(error)) from None
        for old in image_dir.glob("*.jpg"):
            old.unlink()
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=tour.CHROMIUM, args=tour.CHROMIUM_ARGS
            )
            try:
                if base_url:
                    shots = tour.run(base_url.rstrip("/"), image_dir, browser, journeys)
                else:
                    with served_here() as url:
                        shots = tour.run(url, image_dir, browser, journeys)
            finally:
                browser.close()
        (docs_dir / "tour.md").write_text(tour.markdown(shots, "tour"), encoding="utf-8")
        problems = [
            f"{shot.step.path} ({shot.width.label}): {problem}"
            for shot in shots
            for problem in shot.problems
        ]
        self.stdout.write(f"{len(shots)} fotos em {image_dir}; roteiro em {docs_dir / 'tour.md'}.")
        if problems:
            raise CommandError("Páginas com problema:\n" + "\n".join(problems))
