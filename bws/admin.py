from django.contrib import admin

from .models import BwsTuple


@admin.register(BwsTuple)
class BwsTupleAdmin(admin.ModelAdmin):
    list_display = ["tuple_id", "project", "position", "instance", "item_ids"]
    list_filter = ["project"]
    search_fields = ["tuple_id"]
    list_select_related = ["project", "instance"]
    readonly_fields = ["item_ids", "item_indices"]
