#!/usr/bin/env bash
# Installs the Debian packages the project needs, when they are missing.
# Usage: scripts/system-packages.sh run|test|bench|pitr
# As root it runs apt-get; as another user it names what is missing and stops.
set -euo pipefail

purpose="${1:-run}"
pg_major="${CTR_PG_MAJOR:-15}"
missing=()

have_file() { [ -e "$1" ]; }

have_file "/usr/lib/postgresql/${pg_major}/bin/postgres" || missing+=("postgresql-${pg_major}")
have_file "/usr/share/postgresql/${pg_major}/extension/postgis.control" || missing+=("postgresql-${pg_major}-postgis-3")
command -v ogrinfo >/dev/null 2>&1 || missing+=("gdal-bin")
# GeoDjango loads libgdal and libgeos_c itself (gdal-bin pulls both in).
ldconfig -p 2>/dev/null | grep -q "libgeos_c.so" || missing+=("libgeos-c1v5")
python3 -c "import venv, ensurepip" >/dev/null 2>&1 || missing+=("python3-venv")
if [ "$purpose" = "test" ]; then
    command -v chromium >/dev/null 2>&1 || missing+=("chromium")
    have_file /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf || missing+=("fonts-dejavu-core")
    # The PDF tests read the certificates and declarations as a reader does (pdftotext).
    command -v pdftotext >/dev/null 2>&1 || missing+=("poppler-utils")
fi
# Point-in-time recovery (scripts/pitr.sh, `make pitr-setup`); the test archives and restores a
# cluster of its own (tests/config/test_pitr.py).
if [ "$purpose" = "test" ] || [ "$purpose" = "pitr" ]; then
    command -v pgbackrest >/dev/null 2>&1 || missing+=("pgbackrest")
fi
# The benchmarks' load generator (bench/p2_http.py, its paced open loop bench/wrk/paced.lua);
# the tests run it against a loopback server (tests/bench/test_p2_load.py).
if [ "$purpose" = "test" ] || [ "$purpose" = "bench" ]; then
    command -v wrk >/dev/null 2>&1 || missing+=("wrk")
fi

[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "Faltam pacotes do sistema: ${missing[*]}" >&2
    echo "Instale-os como root: apt-get install ${missing[*]}" >&2
    exit 1
fi

echo "Instalando pacotes Debian: ${missing[*]}"
# Debian's postgresql package would create and start its own 'main' cluster on 5432;
# we run a project-local cluster instead, so tell it not to.
mkdir -p /etc/postgresql-common
if ! grep -qs '^create_main_cluster' /etc/postgresql-common/createcluster.conf; then
    echo "create_main_cluster = false" >> /etc/postgresql-common/createcluster.conf
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
