from esatui.cli import main

raise SystemExit(main())
