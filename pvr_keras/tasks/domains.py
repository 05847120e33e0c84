"""Alias of ``pvr_keras.kinds.boolean.domains``, the seen domains of the boolean and gotu kinds
(in the boolean kind's folder): this old path keeps importing the same objects."""

from pvr_keras.kinds.boolean.domains import (
    DOMAIN_KINDS,
    MAX_DOMAIN_BITS,
    Domain,
    check_domain,
    slug,
)

__all__ = ["DOMAIN_KINDS", "MAX_DOMAIN_BITS", "Domain", "check_domain", "slug"]
