from django.core.management.base import BaseCommand, CommandError

from labs import services as labs


class Command(BaseCommand):
    help = (
        "Create a lab with its first lab admins (and members); prints its slug. "
        "Staff do the same on the web's Labs page and with POST /api/v1/labs/."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="the lab's name, as people see it")
        parser.add_argument("--slug", default="", help="for its address (default: from the name)")
        parser.add_argument(
            "--admin", action="append", default=[], metavar="USER", help="a lab admin (repeat)"
        )
        parser.add_argument(
            "--member", action="append", default=[], metavar="USER", help="a member (repeat)"
        )

    def handle(self, *args, **options):
        try:
            admins = [labs.account(name) for name in dict.fromkeys(options["admin"])]
            members = [labs.account(name) for name in dict.fromkeys(options["member"])]
            lab = labs.create_lab(
                actor=labs.OPERATOR, name=options["name"], slug=options["slug"], admins=admins
            )
            for user in members:
                if user not in admins:
                    labs.add_person(actor=labs.OPERATOR, lab=lab, user=user)
        except labs.LabRefused as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(lab.slug)
        for user in admins:
            self.stderr.write(f"{user.get_username()}: lab admin of {lab.slug}")
        for user in members:
            if user not in admins:
                self.stderr.write(f"{user.get_username()}: member of {lab.slug}")
