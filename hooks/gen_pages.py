"""mkdocs-gen-files script: writes the generated pages (catalogs, tag index, pattern graph, measured results)
into the build.

The pages come from the ``knowledge`` plugin's build, which read and checked every page before this
runs (the plugin is listed before ``gen-files`` in ``mkdocs.yml``); nothing here is committed to ``docs/``.
The measured-results page also needs the declared comparison groups and which shapes have a record: the
knowledge layer never imports the evidence layer, so this wiring hands them in.
"""

import mkdocs_gen_files

from mla_var3.evidence.groups import GROUPS
from mla_var3.evidence.model import GROUPS_DIR
from mla_var3.evidence.store import evidence_dir, record_files
from mla_var3.knowledge import layout
from mla_var3.knowledge.results import ResultsGroup, results_page

build = mkdocs_gen_files.config.plugins["knowledge"].build
pages = build.generated_pages()
root = evidence_dir()
recorded = {
    path.relative_to(root).parts[1:3]
    for path in record_files(root)
    if path.relative_to(root).parts[0] == GROUPS_DIR
}
groups = [
    ResultsGroup(g.name, g.description, g.reference, tuple(m.id for m in g.members), g.shapes) for g in GROUPS
]
pages[layout.RESULTS] = results_page(
    build.site, groups, recorded, build.evidence.compare if build.evidence else None
)
for path, text in pages.items():
    with mkdocs_gen_files.open(path, "w") as handle:
        handle.write(text)
