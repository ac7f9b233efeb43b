from gatekeep.main import main

raise SystemExit(main())
