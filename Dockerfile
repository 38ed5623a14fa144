# The web app for docker-compose.yml (PostGIS runs in its own official image).

# The pinned browser libraries (package-lock.json), as scripts/frontend-assets.sh installs them
# for `make run`: the app image itself has no npm.
FROM node:20-bookworm-slim AS assets
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/frontend-assets.sh scripts/
RUN bash scripts/frontend-assets.sh

FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
RUN apt-get update \
    && apt-get install -y --no-install-recommends gdal-bin libgeos-c1v5 postgresql-client \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY . .
COPY --from=assets /app/static/vendor static/vendor
RUN pip install --no-cache-dir -e .
# The app runs as an unprivileged user; it writes only the static files and the media.
RUN useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin ctr \
    && mkdir -p staticfiles media && chown ctr:ctr staticfiles media
USER ctr
# Production (docs/operations.md, "Processos em produção"): DEBUG off, the hashed and
# compressed static files collected into the image (the URLconf names some by their hashed
# names). The secret key at build time only serves collectstatic; the container gets its own.
ENV HOST=0.0.0.0 PORT=8000 PYTHON=python DJANGO_DEBUG=false DJANGO_STATIC_MANIFEST=true
RUN DJANGO_SECRET_KEY=build-only python manage.py collectstatic --noinput -v 0
EXPOSE 8000
# The web process; the worker and the scheduler are the same image with `python manage.py
# worker` / `scheduler` (docker-compose.yml), and the migrations a one-off `scripts/serve.sh
# prepare`.
CMD ["gunicorn", "-c", "deploy/gunicorn.conf.py", "config.wsgi:application"]
