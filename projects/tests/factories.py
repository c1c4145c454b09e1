import factory
from django.contrib.auth import get_user_model

from projects.models import Lab, LabMembership, Membership, Project


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.org")
    password = factory.django.Password("pw-for-tests-123")


class LabFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Lab

    name = factory.Sequence(lambda n: f"Lab {n}")
    slug = factory.Sequence(lambda n: f"lab-{n}")


class LabMembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = LabMembership

    lab = factory.SubFactory(LabFactory)
    user = factory.SubFactory(UserFactory)
    is_admin = False


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Project

    lab = factory.SubFactory(LabFactory)
    slug = factory.Sequence(lambda n: f"project-{n}")
    name = factory.Sequence(lambda n: f"Project {n}")
    config = factory.LazyFunction(
        lambda: {"schemes": [{"name": "q", "type": "radio"}], "notices": []}
    )


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    user = factory.SubFactory(UserFactory)
    project = factory.SubFactory(ProjectFactory)
    role = Membership.Role.ANNOTATOR
