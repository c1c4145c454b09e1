"""The API's pages: DRF's page numbers, with examples in the schema that fit Annolab's
replies (DRF's own point at an example host's /accounts/ list)."""

from rest_framework.pagination import PageNumberPagination


class Pages(PageNumberPagination):
    def get_paginated_response_schema(self, schema):
        paged = super().get_paginated_response_schema(schema)
        properties = paged["properties"]
        properties["count"]["example"] = 1
        properties["next"]["example"] = None
        properties["previous"]["example"] = None
        return paged
