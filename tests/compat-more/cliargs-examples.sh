# lua_cliargs examples (Debian lua-cliargs) with several command lines, run by the interpreter $1
B=$1
$B 00_general.lua --help
$B 00_general.lua -o myfile -d --compress=gzip inputfile
$B 00_general.lua --__DUMP__ -o myfile -d --compress=gzip inputfile a b
$B 00_general.lua out in1 in2 in3 in4
$B 00_general.lua -v
$B 01_multiple_options.lua --help
$B 01_multiple_options.lua -k a -k b --key=c --verbose --verbose
$B 02_parse_callbacks.lua --help
$B 02_parse_callbacks.lua --quiet --version
$B 04_commands--git.lua --help
$B 04_commands--git.lua log --help
$B 04_commands--git.lua log --oneline
$B 04_commands--git.lua bogus
echo end
