"""The password hasher of the test suite: Django's PBKDF2 at one round.

A hash it makes is an ordinary ``pbkdf2_sha256`` hash with its round count written in
it, so the servers that tests start with the shipped settings verify it too (and
upgrade it at the first login, as they would any older hash). The shipped rounds cost
about half a second of CPU a hash on a 2-core machine, paid for every test user made
or logged in.
"""

from django.contrib.auth.hashers import PBKDF2PasswordHasher


class OneRoundPBKDF2(PBKDF2PasswordHasher):
    iterations = 1


HASHER = f"{__name__}.OneRoundPBKDF2"
