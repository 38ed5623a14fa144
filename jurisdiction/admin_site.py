"""The admin site, scoped like every page: every registered model is either scoped
(its manager is a ScopedQuerySet: the lists, the objects reached by URL and the choices of its
foreign keys are the user's municipalities') or the platform administrator's alone (users,
tokens, the access log, the roles themselves). The apps register their admins as always; this
site decides, at registration, which of the two each is. The default site of the project
(jurisdiction.apps.ScopedAdminConfig); its own module, which registers nothing, because the
default site is built while the admin modules that register on it are imported. Every admin's
inlines are scoped the same way (their rows when their model is scoped, their choices always),
every admin and inline gets the Portuguese blank choices of config.admin_blanks, and every
admin's save that meets a row another user committed meanwhile is judged again (SavedMeanwhile)."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db import IntegrityError
from django.http import HttpResponseRedirect

from config.admin_blanks import BlankChoices

from .scope import ScopedQuerySet


def _scoped_manager(model) -> bool:
    return isinstance(model._default_manager.all(), ScopedQuerySet)


class ScopedChoices:
    """An admin or inline whose foreign-key and many-to-many choices of a scoped model are
    `visible_to` the user."""

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        related = db_field.related_model
        if "queryset" not in kwargs and _scoped_manager(related):
            kwargs["queryset"] = related._default_manager.visible_to(request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        related = db_field.related_model
        if "queryset" not in kwargs and _scoped_manager(related):
            kwargs["queryset"] = related._default_manager.visible_to(request.user)
        return super().formfield_for_manytomany(db_field, request, **kwargs)


class ScopedAdmin(ScopedChoices):
    """A ModelAdmin (or inline) whose rows and foreign-key choices are `visible_to` the user."""

    def get_queryset(self, request):
        return super().get_queryset(request).visible_to(request.user)


class AdministratorOnly:
    """A model with no municipality of its own: the platform administrator's (superuser)."""

    def has_module_permission(self, request):
        return request.user.is_active and request.user.is_superuser

    def has_view_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_superuser

    def has_add_permission(self, request, *args):
        return (
            request.user.is_active
            and request.user.is_superuser
            and super().has_add_permission(request, *args)
        )

    def has_change_permission(self, request, obj=None):
        return (
            request.user.is_active
            and request.user.is_superuser
            and super().has_change_permission(request, obj)
        )

    def has_delete_permission(self, request, obj=None):
        return (
            request.user.is_active
            and request.user.is_superuser
            and super().has_delete_permission(request, obj)
        )


class SavedMeanwhile:
    """Two users saving the same key at once (a municipality's parameters from the same day):
    both forms pass validation, and the second insert meets the first's committed row at the
    unique index. The add or change view is one transaction, so the failed save left nothing;
    the view runs again, and its validation now sees the other row and says so on the form,
    with what the user typed, instead of a 500."""

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except IntegrityError:
            pass
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except IntegrityError:
            # Still refused by the database: a conflict no form validation names. Back to the
            # form (a GET of the page it was posted from), with the reason.
            messages.error(
                request,
                "Não foi possível salvar: outro usuário alterou estes dados ao mesmo tempo. "
                "Confira o cadastro e salve de novo.",
            )
            return HttpResponseRedirect(request.get_full_path())


def _scoped_inline(inline):
    """The inline's rows scoped like its model (a scoped model's rows `visible_to` the user,
    whatever parent they hang from), its choices always, and the Portuguese blank choices."""
    mixin = ScopedAdmin if _scoped_manager(inline.model) else ScopedChoices
    return type(inline.__name__, (mixin, BlankChoices, inline), {"__module__": inline.__module__})


class ScopedAdminSite(admin.AdminSite):
    # Callables (today) -> a warning or "", shown on the admin index: what the apps above
    # need the administrator to do (pev_network: a year without its UFESP).
    index_notices: list = []

    def add_index_notice(self, notice) -> None:
        self.index_notices = [*self.index_notices, notice]

    def index(self, request, extra_context=None):
        for notice in self.index_notices:
            if text := notice():
                messages.warning(request, text)
        return super().index(request, extra_context)

    def register(self, model_or_iterable, admin_class=None, **options):
        models = [model_or_iterable] if isinstance(model_or_iterable, type) else model_or_iterable
        base = admin_class or admin.ModelAdmin
        for model in models:
            mixin = ScopedAdmin if _scoped_manager(model) else AdministratorOnly
            inlines = [_scoped_inline(inline) for inline in base.inlines]
            attrs = {"__module__": base.__module__, "inlines": inlines}
            scoped = type(base.__name__, (mixin, SavedMeanwhile, BlankChoices, base), attrs)
            super().register(model, scoped, **options)
