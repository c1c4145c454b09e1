from django.contrib import admin

from projects.models import (
    AnnotatorProfile,
    Instance,
    Item,
    Lab,
    LabMembership,
    Membership,
    Project,
    Removal,
    Unit,
)


class LabMembershipInline(admin.TabularInline):
    model = LabMembership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Lab)
class LabAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "is_default", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [LabMembershipInline]


@admin.register(LabMembership)
class LabMembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "lab", "is_admin", "joined_at"]
    list_filter = ["lab", "is_admin"]
    search_fields = ["user__username", "lab__name"]


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "lab", "allow_all_users", "created_by", "created_at"]
    list_filter = ["lab", "allow_all_users"]
    search_fields = ["name", "slug"]
    readonly_fields = ["config", "config_source", "config_filename", "created_at", "updated_at"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "project", "role", "created_at"]
    list_filter = ["role", "project"]
    search_fields = ["user__username", "project__slug"]


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ["item_id", "project", "index", "text"]
    list_filter = ["project"]
    search_fields = ["item_id", "text"]
    list_select_related = ["project"]


@admin.register(Instance)
class InstanceAdmin(admin.ModelAdmin):
    list_display = ["instance_id", "project", "position", "source_file", "source_line"]
    list_filter = ["project"]
    search_fields = ["instance_id"]
    list_select_related = ["project"]


@admin.register(Unit)
class UnitAdmin(admin.ModelAdmin):
    list_display = ["external_id", "project", "kind", "position", "load", "completed"]
    list_filter = ["project", "kind"]
    search_fields = ["external_id"]
    list_select_related = ["project"]
    raw_id_fields = ["instance"]


@admin.register(AnnotatorProfile)
class AnnotatorProfileAdmin(admin.ModelAdmin):
    list_display = ["user", "is_model", "model_name"]
    list_filter = ["is_model"]
    search_fields = ["user__username", "model_name"]


@admin.register(Removal)
class RemovalAdmin(admin.ModelAdmin):
    """People removed from a project, kept until they are added again."""

    list_display = ["user", "project", "removed_by", "removed_at"]
    search_fields = ["user__username", "project__slug"]
    raw_id_fields = ["user", "project", "removed_by"]
