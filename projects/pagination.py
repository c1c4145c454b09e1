"""The API's pages: DRF's page numbers, with examples in the schema that fit Annolab's
replies (DRF's own point at an example host's /accounts/ list)."""

from rest_framework.pagination import PageNumberPagination


class Pages(PageNumberPagination):
    """Pages of PAGE_SIZE results; ?page_size= asks for other sizes, up to MAX_PAGE_SIZE."""

    page_size_query_param = "page_size"
    max_page_size = 1000

    def get_paginated_response_schema(self, schema):
        paged = super().get_paginated_response_schema(schema)
        properties = paged["properties"]
        properties["count"]["example"] = 1
        properties["next"]["example"] = None
        properties["previous"]["example"] = None
        return paged
