"""Running a campaign's crowd on Prolific through its REST API (docs/api.md "Prolific"): a draft study from a
campaign, publishing, review beside the platform's verdicts, bonuses, screening and places. An integration layer
above both apps: it reads annotation's models and evaluation's verdicts; neither app imports it."""
