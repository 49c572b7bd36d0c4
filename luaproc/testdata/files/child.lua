-- spawned by spawn_file tests: main doubles, other entries name themselves
function main(x) return x * 2 end
function named() return "named entry" end
