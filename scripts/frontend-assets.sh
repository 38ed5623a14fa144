#!/usr/bin/env bash
# Installs the pinned browser libraries of package.json (package-lock.json, `npm ci`) and
# copies their dist files into static/vendor/, which Django serves (STATICFILES_DIRS) and
# collectstatic gathers: nothing is loaded from a CDN. Run twice, it does nothing the second
# time (the copy is keyed by the lockfile's hash).
# Usage: scripts/frontend-assets.sh
set -euo pipefail
cd "$(dirname "$0")/.."

stamp="static/vendor/.lock-sha256"
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f static/vendor/jsqr/jsQR.js ]; then
    exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "Instalando npm (pacote Debian) para as bibliotecas do navegador"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq && apt-get install -y -qq --no-install-recommends nodejs npm
    else
        echo "Falta o npm: instale-o (apt-get install npm) para as bibliotecas do navegador." >&2
        exit 1
    fi
fi

# The browser libraries only: the dev dependencies (Lighthouse, for `make bench`'s page
# benchmark, ~200 packages) are installed by the benchmark itself (bench/pages.py).
npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error
# jsQR decodes the QR code of a printed CTR from the phone's camera (maps/static/maps/qr-scan.js).
mkdir -p static/vendor/jsqr
cp node_modules/jsqr/dist/jsQR.js static/vendor/jsqr/jsQR.js
cp node_modules/jsqr/LICENSE static/vendor/jsqr/LICENSE 2>/dev/null || true
echo "$want" > "$stamp"
echo "Bibliotecas do navegador em static/vendor/"
