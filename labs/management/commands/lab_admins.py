from django.core.management.base import BaseCommand, CommandError

from labs import services as labs
from projects import selectors
from projects.models import Lab


class Command(BaseCommand):
    help = (
        "List a lab's admins, appoint some, or take the role away (they stay members; "
        "remove them from the lab on its web page). Staff do the same on the lab's page and "
        "with /api/v1/labs/<slug>/members/."
    )

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["list", "add", "remove"])
        parser.add_argument("lab", help="the lab's slug")
        parser.add_argument("usernames", nargs="*", metavar="USER")

    def handle(self, *args, **options):
        lab = Lab.objects.filter(slug=options["lab"]).first()
        if lab is None:
            raise CommandError(f"no lab with the slug {options['lab']!r}")
        action, names = options["action"], list(dict.fromkeys(options["usernames"]))
        if action == "list":
            if names:
                raise CommandError("list takes no usernames")
            for membership in selectors.lab_members(lab).filter(is_admin=True):
                self.stdout.write(membership.user.get_username())
            return
        if not names:
            raise CommandError(f"name the accounts to {action}")
        try:
            users = [labs.account(name) for name in names]
            admins = set(
                selectors.lab_members(lab).filter(is_admin=True).values_list("user", flat=True)
            )
            if action == "remove" and (strangers := [u for u in users if u.pk not in admins]):
                raise CommandError(
                    f"not a lab admin of {lab.slug}: "
                    + ", ".join(u.get_username() for u in strangers)
                )
            for user in users:
                labs.add_person(actor=labs.OPERATOR, lab=lab, user=user, is_admin=action == "add")
        except labs.LabRefused as exc:
            raise CommandError(str(exc)) from exc
        role = "lab admin" if action == "add" else "member (no longer lab admin)"
        for user in users:
            self.stdout.write(f"{user.get_username()}: {role} of {lab.slug}")
