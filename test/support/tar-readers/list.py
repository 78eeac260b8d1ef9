"""Lists tar archives (plain or gzipped) as Python's tarfile reads them, for the differential test.

Reads archive paths (one a line) on stdin; prints one JSON object a line:
{"path", "ok", "error"?, "entries": [{"name", "type", "sha256"?}]}.
"""
import hashlib
import json
import sys
import tarfile

for path in sys.stdin.read().splitlines():
    result = {"path": path, "ok": True, "entries": []}
    try:
        with tarfile.open(path, "r:*") as archive:
            for member in archive:
                if member.isreg():
                    data = archive.extractfile(member).read()
                    result["entries"].append({"name": member.name, "type": "file", "sha256": hashlib.sha256(data).hexdigest()})
                elif member.isdir():
                    result["entries"].append({"name": member.name, "type": "dir"})
                else:
                    result["entries"].append({"name": member.name, "type": "other:" + member.type.decode("latin1")})
    except Exception as error:  # every failure is a verdict here, not a crash
        result = {"path": path, "ok": False, "error": f"{type(error).__name__}: {error}", "entries": []}
    print(json.dumps(result))
