# The web app for docker-compose.yml (PostGIS runs in its own official image).
FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
RUN apt-get update \
    && apt-get install -y --no-install-recommends gdal-bin libgeos-c1v5 postgresql-client \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY . .
RUN pip install --no-cache-dir -e . && python manage.py collectstatic --noinput -v 0
EXPOSE 8000
CMD ["sh", "-c", "python manage.py migrate --noinput && python manage.py load_demo && python manage.py runserver 0.0.0.0:8000"]
