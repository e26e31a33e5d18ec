"""OS-free helpers the switch platforms share (queue percentages, safe descriptions, ECMP
width, gnmic pieces, headroom table cells); the core may import them too."""
