"""What the browser checks share: `expect` (prints and remembers each
check) and `png_is_a_picture` (a screenshot that is not a blank page)."""

import zlib

failures = []


def expect(what, shown, wanted):
    status = "ok  " if shown == wanted else "FAIL"
    print(f"{status} {what}: rendered {shown!r}, wanted {wanted!r}")
    if shown != wanted:
        failures.append(what)


def png_is_a_picture(path, distinct_at_least):
    """The screenshot decodes to pixels of many byte values (not a blank page)."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        if data[pos + 4:pos + 8] == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    distinct = len(set(zlib.decompress(idat)))
    expect(f"{path} has varied pixels (>{distinct_at_least} byte values)", distinct > distinct_at_least, True)
