from solrace.tools.cli import main

raise SystemExit(main())
