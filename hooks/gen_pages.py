"""mkdocs-gen-files script: writes the generated pages (catalogs, tag index, pattern graph) into the build.

The pages come from the ``knowledge`` plugin's build, which read and checked every page before this
runs (the plugin is listed before ``gen-files`` in ``mkdocs.yml``); nothing here is committed to ``docs/``.
"""

import mkdocs_gen_files

build = mkdocs_gen_files.config.plugins["knowledge"].build
for path, text in build.generated_pages().items():
    with mkdocs_gen_files.open(path, "w") as handle:
        handle.write(text)
