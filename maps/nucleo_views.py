"""Moved to nucleo/views.py. Only `municipal_only` is left here, for
fiscalization/enforcement_views.py and fiscalization/analysis_views.py, which import it from
this path; it goes when the "municipal only" rule is written once (issue 12, point 4)."""

from nucleo.views import municipal_only

__all__ = ["municipal_only"]
