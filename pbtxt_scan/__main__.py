from pbtxt_scan.cli import main

main()
