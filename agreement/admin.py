from django.contrib import admin

from .models import AgreementReport


@admin.register(AgreementReport)
class AgreementReportAdmin(admin.ModelAdmin):
    list_display = ["project", "computed_at", "status", "n_annotations"]
    list_filter = ["status", "project"]
    list_select_related = ["project"]
    readonly_fields = ["project", "computed_at", "n_annotations", "report", "status", "error"]
