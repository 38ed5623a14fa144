"""Records the admin shows and never edits: what changes only through its own page or
service (which checks the rules, keeps the history and sends the e-mails)."""


class ReadOnly:
    """An admin (model or inline) that lists and shows; adds, changes and deletes nothing."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
