from django.contrib import admin

from annotation.models import Annotation, Assignment, Submission


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["unit", "annotator", "project", "status", "leased_until", "completed_at"]
    list_filter = ["project", "status"]
    search_fields = ["annotator__username", "unit__external_id"]
    list_select_related = ["unit", "annotator", "project"]
    raw_id_fields = ["unit"]


@admin.register(Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    list_display = ["annotator", "project", "scheme", "unit", "created_at", "updated_at"]
    list_filter = ["project", "scheme"]
    search_fields = ["annotator__username", "unit__external_id"]
    list_select_related = ["annotator", "project", "unit"]
    raw_id_fields = ["unit"]


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = ["client_id", "annotator", "unit", "created_at"]
    search_fields = ["annotator__username", "client_id"]
    list_select_related = ["annotator", "unit"]
    raw_id_fields = ["unit"]
