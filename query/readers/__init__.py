"""One reader per tool, each behind the one view gate (``kubevec.query.scope.admit``), over shared ``Sources``.

``search`` (vector_search), ``documents`` (get_document), ``kinds`` (resolve_kind), ``facets``
(list_facets), ``changes`` (list_changes), ``related`` (related) and ``placements`` (what access
reviews ask about). The table that makes them MCP tools and CLI commands is ``kubevec.query.tools``.
"""
