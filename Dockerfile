# The web app for docker-compose.yml (PostGIS runs in its own official image).
FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
RUN apt-get update \
    && apt-get install -y --no-install-recommends gdal-bin libgeos-c1v5 postgresql-client \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY . .
RUN pip install --no-cache-dir -e .
# The same start as `make run` (scripts/start.sh): migrate, cache table, the three demos,
# static files, serve.
ENV HOST=0.0.0.0 PORT=8000 PYTHON=python
EXPOSE 8000
CMD ["bash", "scripts/start.sh"]
