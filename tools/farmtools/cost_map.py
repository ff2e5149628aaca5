"""Reading a cost map (`farm single --cost-map`, format of farm/costs/cost_map.cpp) and the cost
of a block on it, as CostMap::cost computes it: every tile the block overlaps counts in
proportion to the overlapped pixels. Standard library only."""


class CostMap:
    def __init__(self, width, height, tile, frames, costs, note=""):
        self.width, self.height, self.tile, self.frames = width, height, tile, frames
        self.columns = -(-width // tile)
        self.rows = -(-height // tile)
        self.costs = costs  # [frame][row][column], seconds
        self.note = note

    @classmethod
    def read(cls, path):
        with open(path) as f:
            lines = f.read().splitlines()
        if not lines or lines[0].strip() != "farm-cost-map 1":
            raise ValueError(f"{path}:1: not a cost map (expected 'farm-cost-map 1')")
        h = lines[1].split()
        try:
            fields = dict(zip(h[0::2], (int(v) for v in h[1::2])))
            width, height, tile, frames = (fields[k] for k in ("width", "height", "tile", "frames"))
        except (KeyError, ValueError):
            raise ValueError(f"{path}:2: expected 'width W height H tile T frames F', got {lines[1]!r}")
        at = 2
        note = ""
        if at < len(lines) and lines[at].startswith("note"):
            note = lines[at][4:].strip()
            at += 1
        m = cls(width, height, tile, frames, [], note)
        for frame in range(frames):
            grid = []
            for row in range(m.rows):
                if at >= len(lines):
                    raise ValueError(f"{path}: ends before frame {frame + 1} row {row + 1}")
                values = [float(v) for v in lines[at].split()]
                if len(values) != m.columns:
                    raise ValueError(f"{path}:{at + 1}: {len(values)} costs, expected {m.columns}")
                grid.append(values)
                at += 1
            m.costs.append(grid)
        return m

    def cost(self, frame, x, y, width, height):
        """Seconds of the block (frame counted from 1; frames past the map's last use the last)."""
        grid = self.costs[min(frame, self.frames) - 1]
        t = self.tile
        total = 0.0
        for row in range(y // t, min(self.rows, -(-(y + height) // t))):
            ty0, ty1 = row * t, min(self.height, (row + 1) * t)
            oy = min(ty1, y + height) - max(ty0, y)
            for col in range(x // t, min(self.columns, -(-(x + width) // t))):
                tx0, tx1 = col * t, min(self.width, (col + 1) * t)
                ox = min(tx1, x + width) - max(tx0, x)
                if ox > 0 and oy > 0:
                    total += grid[row][col] * ox * oy / ((tx1 - tx0) * (ty1 - ty0))
        return total

    def total(self):
        return sum(sum(map(sum, grid)) for grid in self.costs)
