"""mkdocs-gen-files script: writes the generated pages (catalogs, tag index, pattern graph) into the build.

The pages come from ``mla_var3.knowledge``; nothing here is committed to ``docs/``.
"""

import mkdocs_gen_files

from mla_var3.knowledge import current_build

for path, text in current_build().generated_pages().items():
    with mkdocs_gen_files.open(path, "w") as handle:
        handle.write(text)
