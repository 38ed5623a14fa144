import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

from config.middleware import serve_requests_only  # noqa: E402 - needs Django set up
from config.startup import load_everything_and_freeze  # noqa: E402

load_everything_and_freeze()
# A gunicorn worker runs requests and nothing else on its connections.
serve_requests_only()
