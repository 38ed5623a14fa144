"""gunicorn in production (Procfile: web; docs/operations.md, "Processos em produção").

Environment: HOST (0.0.0.0 in the image, 127.0.0.1 otherwise), PORT (8000), WEB_CONCURRENCY
(worker processes, 2 per core + 1 by default), GUNICORN_THREADS (4 per process)."""

import multiprocessing
import os

from config.log_format import log_format

bind = f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2 + 1))
# Threads: a request waiting on the database or a slow phone does not hold a whole process.
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
# Past the request statement timeout (CTR_REQUEST_STATEMENT_TIMEOUT_MS, 15 s) with room.
timeout = 60
graceful_timeout = 20
# A worker recycled after so many requests (plus jitter, not all at once): slow leaks stay small.
max_requests = 2000
max_requests_jitter = 200
# Logs to stdout/stderr, where systemd, honcho or Docker collect them. The access log carries
# paths and addresses, never a body: CPF/CNPJ, e-mail and phone travel in bodies only.
accesslog = "-" if os.environ.get("GUNICORN_ACCESS_LOG", "1") != "0" else None
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
# In JSON (production's default: config/log_format.py) gunicorn's own lines (start, workers
# booted and exited, errors, its access lines) are JSON objects too, masked as the app's are: a
# log collector reads one format.
if log_format() == "json":
    logconfig_dict = {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"personal_data": {"()": "config.log_privacy.MaskPersonalData"}},
        "formatters": {"json": {"()": "config.logs.JsonFormatter"}},
        "handlers": {
            "error": {
                "class": "logging.StreamHandler",
                "filters": ["personal_data"],
                "formatter": "json",
                "stream": "ext://sys.stderr",
            },
            "access": {
                "class": "logging.StreamHandler",
                "filters": ["personal_data"],
                "formatter": "json",
                "stream": "ext://sys.stdout",
            },
        },
        "root": {"handlers": ["error"], "level": "WARNING"},
        "loggers": {
            "gunicorn.error": {
                "handlers": ["error"],
                "level": loglevel.upper(),
                "propagate": False,
            },
            # With a logging dict gunicorn writes its access lines whatever `accesslog` says:
            # silenced here unless GUNICORN_ACCESS_LOG asks for them.
            "gunicorn.access": {
                "handlers": ["access"],
                "level": "INFO" if accesslog else "WARNING",
                "propagate": False,
            },
        },
    }


def child_exit(server, worker):
    # A recycled or dead worker's live gauges leave /metrics (its counters stay summed).
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)
