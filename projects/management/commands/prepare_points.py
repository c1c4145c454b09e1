from django.core.management.base import BaseCommand, CommandError

from projects.media import prepare_points
from projects.models import Project
from projects.services import project_folder


class Command(BaseCommand):
    help = (
        "Decode the stored point clouds that have no decoded points yet (projects stored "
        "before clouds were decoded at import); --again decodes every one, e.g. after "
        "POINT_CLOUD_MAX_POINTS changed."
    )

    def add_arguments(self, parser):
        parser.add_argument("slugs", nargs="*", metavar="SLUG", help="these projects only")
        parser.add_argument("--again", action="store_true", help="decode every cloud again")

    def handle(self, *args, **options):
        projects = Project.objects.exclude(storage_folder="").order_by("pk")
        if options["slugs"]:
            projects = projects.filter(slug__in=options["slugs"])
            missing = set(options["slugs"]) - set(projects.values_list("slug", flat=True))
            if missing:
                raise CommandError(f"no project with slug {', '.join(sorted(missing))}")
        total, failures = 0, 0
        for project in projects:
            done, failed = prepare_points(project_folder(project), again=options["again"])
            total += done
            failures += len(failed)
            for reason in failed:
                self.stderr.write(f"{project.slug}: {reason}")
            if done:
                self.stdout.write(f"{project.slug}: {done} point clouds decoded")
        self.stdout.write(f"{total} point clouds decoded, {failures} that do not decode")
        if failures:
            raise CommandError(f"{failures} stored point clouds do not decode")
