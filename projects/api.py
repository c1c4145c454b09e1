"""REST views of projects: the projects a user sees, and one project's summary."""

from django.shortcuts import get_object_or_404
from rest_framework import generics, serializers

from . import selectors
from .models import Project


class ProjectOutputSerializer(serializers.ModelSerializer):
    lab = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    role = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()

    class Meta:
        model = Project
        fields = ["slug", "name", "lab", "allow_all_users", "created_at", "role", "progress"]

    def get_role(self, project) -> str | None:
        return selectors.project_role(self.context["request"].user, project)

    def get_progress(self, project) -> dict:
        progress = self.context.get("progress", {}).get(project.pk)
        if progress is None:
            progress = selectors.project_progress([project])[project.pk]
        return {"done": progress.done, "total": progress.total, "percent": progress.percent}


class ProjectListApi(generics.ListAPIView):
    """Projects the caller may see, with their role and progress."""

    serializer_class = ProjectOutputSerializer

    def get_queryset(self):
        return selectors.visible_projects(self.request.user).order_by("name")

    def get_serializer_context(self):
        context = super().get_serializer_context()
        page = getattr(self, "_page", None)
        if page is not None:
            context["progress"] = selectors.project_progress(page)
        return context

    def paginate_queryset(self, queryset):
        self._page = super().paginate_queryset(queryset)
        return self._page


class ProjectDetailApi(generics.RetrieveAPIView):
    """One project the caller may see (404 for any other)."""

    serializer_class = ProjectOutputSerializer

    def get_object(self):
        return get_object_or_404(
            selectors.visible_projects(self.request.user), slug=self.kwargs["slug"]
        )
