"""Site-wide middleware."""


class DatabaseGuardMiddleware:
    """Placeholder: answers 503 in Portuguese when the database is unavailable, and runs each
    request under a statement timeout (implemented with the fault tests)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)
