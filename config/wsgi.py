import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

from config.startup import load_everything_and_freeze  # noqa: E402 - needs Django set up

load_everything_and_freeze()
