# stallscope's icon: three timeline rows of slices, one long red stall.
import zlib, struct
N = 1024
px = bytearray(N * N * 4)
def put(x, y, c):
    i = (y * N + x) * 4
    a = c[3] / 255
    for k in range(3):
        px[i + k] = int(c[k] * a + px[i + k] * (1 - a))
    px[i + 3] = max(px[i + 3], c[3])
def rect(x0, y0, x1, y1, c, r=0):
    for y in range(y0, y1):
        for x in range(x0, x1):
            if r:
                dx = max(x0 + r - x, 0, x - (x1 - 1 - r)); dy = max(y0 + r - y, 0, y - (y1 - 1 - r))
                if dx * dx + dy * dy > r * r: continue
            put(x, y, c)
rect(48, 48, 976, 976, (27, 36, 48, 255), r=180)
rows = [(260, [(150, 300), (340, 420), (470, 610), (660, 870)]),
        (470, [(150, 230), (270, 330), (380, 450), (700, 800)]),
        (680, [(150, 260), (300, 400), (440, 520), (560, 660), (720, 870)])]
for y, segs in rows:
    for a, b in segs:
        rect(a, y, b, y + 110, (78, 205, 196, 255), r=18)
rect(450, 440, 880, 600, (239, 83, 80, 255), r=24)   # the stall
rect(150, 860, 870, 880, (200, 210, 220, 255), r=8)  # time axis
raw = b''.join(b'\0' + bytes(px[y * N * 4:(y + 1) * N * 4]) for y in range(N))
def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
png = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', N, N, 8, 6, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b'')
open('icon-1024.png', 'wb').write(png)
