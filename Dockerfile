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
# The same start as `make run` (scripts/start.sh): migrate, cache table, the three demos,
# static files, serve.
ENV HOST=0.0.0.0 PORT=8000 PYTHON=python
EXPOSE 8000
CMD ["bash", "scripts/start.sh"]
