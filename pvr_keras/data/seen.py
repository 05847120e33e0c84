"""Alias of ``pvr_keras.kinds.boolean.keys``, where the Boolean generators' draw plans are (in
the boolean kind's folder): this old path keeps importing the same objects."""

from pvr_keras.kinds.boolean.keys import DrawPlan, domain_of, draw_plan, pattern_columns

__all__ = ["DrawPlan", "domain_of", "draw_plan", "pattern_columns"]
